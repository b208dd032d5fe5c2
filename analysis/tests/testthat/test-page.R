# The page's own helpers: columns picked in order, whole-system figures told apart.

test_that("a table shows the columns it has, in the order asked", {
  dt <- data.table(b = 1, a = 2, c = 3)
  expect_identical(names(pick(dt, c("c", "a", "missing"))), c("c", "a"))
  expect_null(pick(NULL, "a"))
  expect_identical(pick(dt[0], "a"), dt[0])
})

test_that("the machine map, core map and ranking are the whole system's figures", {
  files <- c("fwq-machine-map.png", "fwq-core-map.png", "fwq-ranking.png", "spectra.png",
    "ranking.png.txt")
  expect_identical(is_whole_system(files), c(TRUE, TRUE, TRUE, FALSE, FALSE))
})
