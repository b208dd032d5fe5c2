# A run's threads are made when first asked for, once, and subsets share them.

test_that("a thread is made on first use, once, and its fields read without making any", {
  made <- 0
  make <- function(at) {
    made <<- made + 1
    e <- new.env()
    e$unit <- at - 1L
    e
  }
  fields <- list(unit = 0:3, cpu = c(4L, 5L, 6L, 7L), host = rep("h", 4))
  threads <- rank_threads(make, fields)
  expect_length(threads, 4)
  expect_equal(thread_values(list(threads = threads), "cpu", 0L), 4:7)
  expect_equal(made, 0)
  expect_equal(threads[[3]]$unit, 2L)
  expect_equal(threads[[3]]$unit, 2L)
  expect_equal(made, 1)
  # a subset shares what was made, and reads its own fields
  sub <- threads[c(3, 4)]
  expect_equal(thread_values(list(threads = sub), "cpu", 0L), 6:7)
  expect_equal(sub[[1]]$unit, 2L)
  expect_equal(made, 1)
  expect_equal(vapply(as.list(sub), function(t) t$unit, 0L), 2:3)
  expect_equal(made, 2)
})
