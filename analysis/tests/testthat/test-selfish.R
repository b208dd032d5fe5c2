test_that("overhead, rate and lengths of the detours", {
  dir <- withr_tempdir()
  # 100 detours of 10 us in 2 s, iterations of 10 ns: 0.05% overhead
  d <- data.table(start_ns = seq(1e6, by = 2e7, length.out = 100), length_ns = 10010)
  write_selfish(dir, "selfish", list(d, d[0]), period_s = 2)
  runs <- read_results(dir)$runs
  t <- selfish_table(runs)
  expect_equal(t[rank == 0]$cpu_overhead_percent, 0.05)
  expect_equal(t[rank == 0]$detours_per_s, 50)
  expect_equal(t[rank == 0]$median_detour_us, 10.01)
  expect_equal(t[rank == 0]$max_detour_us, 10.01)
  expect_true(is.na(t[rank == 1]$max_detour_us))
  expect_equal(t[rank == 1]$detours, 0)
  expect_equal(noise_summary(runs$selfish, "selfish")$noise_percent, c(0.05, 0))
  over <- noise_over_time(runs$selfish, bins = 4)
  expect_equal(over$noise_percent, rep(0.05, 4))
})
