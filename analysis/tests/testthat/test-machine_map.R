# The machine map orders names as a person counts them.

test_that("names sort as counted: x2 before x10, then by their words", {
  expect_identical(natural_order(c("nb10", "nb2", "nb1")), c("nb1", "nb2", "nb10"))
  expect_identical(natural_order(c("c1-0c0s10", "c1-0c0s2", "c0-0c1s0")),
    c("c0-0c1s0", "c1-0c0s2", "c1-0c0s10"))
  expect_identical(natural_order(c("b1", "a2", "a10")), c("a2", "a10", "b1"))
  x <- c("n3", "n1", "n20")
  expect_identical(x[order(natural_rank(x))], natural_order(x))
})
