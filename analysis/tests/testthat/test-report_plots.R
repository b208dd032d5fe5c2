# Which runs a figure of a panel a run shows, and what its caption says of the rest.

test_that("of more runs than panels, those whose median CPU the system took most from, in report order", {
  summary <- data.table(run = rep(c("a", "b", "c"), each = 2), noise_percent = c(1, 1, 5, 5, 3, 3))
  shown <- panel_runs(c("a", "b", "c"), summary, k = 2)
  expect_identical(as.vector(shown), c("b", "c"))
  expect_match(panels_note(shown), "Of the 3 runs, the 2 whose median CPU the system took most from.")
  all <- panel_runs(c("a", "b"), summary, k = 2)
  expect_identical(panels_note(all), "")
})

test_that("the fixed-work figure's kernels are the catalogue's timed-work ones", {
  for (k in names(noisebench_kernels$kernels)) {
    info <- kernel_info(k)
    expect_identical(timed_work(info), info$fixed == "work" && info$loss != "detours")
  }
})

test_that("a tiled figure says how it banded its rows, and nothing when it did not", {
  expect_identical(banded(tile_rows_max, "CPUs"), "")
  expect_match(banded(10 * tile_rows_max, "CPUs"),
    sprintf("of %d CPUs, the %d noisiest a row each", 10 * tile_rows_max, tile_rows_single))
})
