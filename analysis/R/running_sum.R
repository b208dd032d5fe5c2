# The running sum of millions of samples, asked at a few hundred places (the
# bins of a heat map), without a cumulative sum as long as the samples:
# that temporary costs more than the arithmetic. Block totals come from
# .colSums, which reads the samples in place; a place inside a block sums
# that block's part of the samples. For non-negative samples. A rank of up
# to `whole` samples keeps its whole running sum (block 1): one vector
# search answers every place, where thousands of ranks asked block by block
# would cost a call each.
running_sum <- function(x, block = 4096, whole = 65536) {
  if (length(x) <= whole) return(list(x = x, block = 1, ends = cumsum(c(0, as.numeric(x)))))
  k <- length(x) %/% block
  rest <- if (length(x) > k * block) sum(x[(k * block + 1):length(x)]) else 0
  # ends[j + 1]: the sum of the first j blocks
  list(x = x, block = block, ends = cumsum(c(0, .colSums(x, block, k), rest)))
}

# The sum of the first i samples, for each i in idx.
running_sum_at <- function(rs, idx) {
  if (rs$block == 1) return(rs$ends[idx + 1])
  vapply(idx, function(i) {
    if (i == 0) return(0)
    j <- (i - 1) %/% rs$block
    rs$ends[j + 1] + sum(rs$x[(j * rs$block + 1):i])
  }, numeric(1))
}

# How many leading samples sum to at most v, for each v:
# findInterval(v, cumsum(x)).
running_sum_count <- function(rs, v) {
  n <- length(rs$x)
  if (rs$block == 1) return(pmax(findInterval(v, rs$ends) - 1, 0))
  vapply(v, function(value) {
    # whole blocks within value (ends[1] is the empty sum)
    j <- findInterval(value, rs$ends) - 1
    if (j < 0) return(0)
    from <- j * rs$block + 1
    if (from > n) return(n)
    to <- min(from + rs$block - 1, n)
    # (as doubles: a block of integers may sum past the largest integer)
    from - 1 + findInterval(value, rs$ends[j + 1] + cumsum(as.numeric(rs$x[from:to])))
  }, numeric(1))
}
