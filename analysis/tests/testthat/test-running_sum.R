test_that("running sums at places and their counts agree with cumsum", {
  set.seed(6)
  # one sample, part of a block, whole blocks, a block and one, zeros
  for (n in c(1, 5, 64, 65, 300)) {
    x <- round(stats::runif(n, 0, 10))
    x[sample(n, n %/% 3)] <- 0
    idx <- unique(c(0, 1, n, sample(n, min(n, 50))))
    v <- c(-1, 0, sum(x), sum(x) + 1, stats::runif(50, 0, sum(x)), cumsum(x))
    # by blocks, and whole (the samples of a short rank)
    for (rs in list(running_sum(x, block = 64, whole = 0), running_sum(x))) {
      expect_equal(running_sum_at(rs, idx), c(0, cumsum(x))[idx + 1])
      expect_equal(running_sum_count(rs, v), findInterval(v, cumsum(x)))
    }
  }
})
