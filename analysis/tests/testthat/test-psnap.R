test_that("the PRACE tables come from each run and each core count", {
  dir <- withr_tempdir()
  write_psnap(dir, "p1", list(rep(1e6, 100)))
  write_psnap(dir, "p2", list(rep(1.01e6, 100), rep(1.03e6, 100)), correlation = c(1, 0.2))
  write_psnap(dir, "p2b", list(rep(1.01e6, 100), rep(1.01e6, 100)), correlation = c(1, 0.4))
  runs <- read_results(dir)$runs
  table <- psnap_runs(runs)
  expect_equal(table[run == "p1"]$system_correlation, 1)
  expect_equal(table[run == "p2"]$tasks, 2)
  expect_equal(table[run == "p2"]$nodes, 1)
  expect_equal(table[run == "p2"]$os_noise_percent, 2)
  expect_equal(table[run == "p2"]$calibration_time_s, 0.1)
  cores <- psnap_by_cores(table)
  expect_equal(cores$cores, c(1, 2))
  expect_equal(cores[cores == 2]$system_correlation, 0.3)
  expect_equal(cores[cores == 2]$noise_percent, 1.5)
  expect_equal(cores[cores == 2]$runs, 2)
  expect_equal(nrow(psnap_iterations(runs)), 500)
})

test_that("P-SNAP noise in the summary is its slowdown of the calibrated loop", {
  dir <- withr_tempdir()
  write_psnap(dir, "p", list(c(rep(1e6, 99), 1.1e6)))
  s <- noise_summary(read_run(file.path(dir, "p.json")), "p")
  expect_equal(s$noise_percent, 0.1)
  expect_equal(s$scaled_noise_mean, 0.001)
})

test_that("P-SNAP noise is measured against the run's fastest iteration when the run was faster", {
  dir <- withr_tempdir()
  # calibrated in a slow stretch at 1010 us; the run does 1000 us, one in ten 1100
  write_psnap(dir, "p", list(rep(c(rep(1e6, 9), 1.1e6), 10)), calibrated_us = 1010)
  s <- noise_summary(read_run(file.path(dir, "p.json")), "p")
  expect_equal(s$noise_percent, 1)
})
