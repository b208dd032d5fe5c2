# The figures' building blocks: log bins that hold every sample, titles that fit.

test_that("log breaks span the samples at 1/20 decade, at least a decade", {
  b <- log_breaks(1e-4, 3)
  expect_lte(b[1], 1e-4)
  expect_gte(utils::tail(b, 1), 3)
  expect_equal(diff(log10(b)), rep(1 / 20, length(b) - 1), tolerance = 1e-9)
  one <- log_breaks(5, 5)
  expect_gte(utils::tail(one, 1), 50)
})

test_that("every sample is counted once, in the bin that holds it", {
  breaks <- c(1, 10, 100, 1000)
  x <- c(1, 2, 9.9, 10, 500, 1000, 0.5, 5000)
  bins <- bin_counts(x, "r", breaks)
  expect_equal(sum(bins$n), length(x))
  # beyond the ends: the first and the last bin
  expect_equal(bins[bin == 1]$n, 4)
  expect_equal(bins[bin == 3]$n, 3)
  expect_true(all(bins$lo < bins$hi))
})

test_that("a title is broken into lines a figure's width holds", {
  long <- paste(rep("nb00001", 40), collapse = " ")
  t <- plot_title(long, "noise per CPU over time", inches = 6)
  expect_true(all(nchar(strsplit(t, "\n")[[1]]) <= 60))
  expect_identical(gsub("\n", " ", t), paste0(long, ": noise per CPU over time"))
  expect_identical(plot_title("vm"), "vm")
})
