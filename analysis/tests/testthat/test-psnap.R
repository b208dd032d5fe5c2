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

test_that("P-SNAP per node is the PRACE recipe's sum of its ranks' total times", {
  dir <- withr_tempdir()
  # two nodes of two ranks, 100 iterations of a 1000 us granularity each
  write_psnap(dir, "p", list(rep(1.01e6, 100), rep(1.03e6, 100), rep(1e6, 100),
    rep(1e6, 100)), hosts = c("n1", "n1", "n2", "n2"))
  nodes <- psnap_node_table(read_results(dir)$runs)
  expect_equal(nodes$host, c("n1", "n2"))
  expect_equal(nodes$ranks, c(2, 2))
  expect_equal(nodes$total_time_s, c(0.204, 0.2))
  expect_equal(nodes$nominal_time_s, c(0.2, 0.2))
  # (1 - 2 x 100 x 1000 / total) x 100, as the notes' awk computes it
  expect_equal(nodes$slowdown_percent, c(100 * (1 - 0.2 / 0.204), 0))
  expect_equal(nrow(psnap_node_table(list())), 0)
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

test_that("the all-rank histogram is the one the ranks counted, read from the JSON", {
  dir <- withr_tempdir()
  write_psnap(dir, "p", list(rep(1e6, 50), c(rep(1.0004e6, 40), rep(5e6, 10))))
  path <- file.path(dir, "p.json")
  h <- psnap_histogram(read_run(path, samples = "when_used"))
  expect_equal(h$bins[n > 0]$lo, 1000)
  expect_equal(h$bins[n > 0]$n, 90)
  expect_equal(h$overflow, 10)
  # an edit of the JSON's counts is what the figure shows: no sample is read
  meta <- jsonlite::fromJSON(path, simplifyVector = FALSE)
  meta$iteration_histogram$counts <- list(7, 0, 3)
  write_json_run(dir, "p", meta)
  h <- psnap_histogram(read_run(path, samples = "when_used"))
  expect_equal(h$bins$n, c(7, 0, 3))
  expect_equal(h$bins$lo, 1000 + 0:2)
  meta$iteration_histogram <- NULL
  write_json_run(dir, "p", meta)
  expect_error(psnap_histogram(read_run(path)), "p.json: the P-SNAP run's JSON has no iteration_histogram")
})

test_that("the per-node figure reads the ranks of the nodes it shows only", {
  dir <- withr_tempdir()
  # ten hosts of one rank each; host h's rank loses h us in 2 of its 100 iterations
  write_psnap(dir, "p", lapply(0:9, function(h) c(rep(1e6, 98), rep(1e6 + h * 1e3, 2))))
  path <- file.path(dir, "p.json")
  meta <- jsonlite::fromJSON(path, simplifyVector = FALSE)
  for (i in seq_along(meta$ranks)) meta$ranks[[i]]$host <- paste0("n", i - 1)
  write_json_run(dir, "p", meta)
  run <- read_run(path, samples = "when_used")
  tails <- psnap_host_tails(run)[order(host)]
  expect_equal(tails$p99_us, 0:9, tolerance = 0.01)
  shown <- tails$host[detail_positions(tails$p99_us)]
  expect_setequal(shown, paste0("n", c(0, 3:9)))
  # the files of the hosts not shown are never read
  unlink(file.path(dir, c("p_1_times.dat", "p_2_times.dat")))
  iterations <- psnap_iterations(list(p = hosts_run(run, shown)))
  expect_equal(nrow(iterations), 8 * 100)
})

test_that("the all-rank histogram's note counts what it leaves out", {
  caption <- function(n, overflow) {
    h <- list(bins = data.table(lo = 1000 + seq_along(n) - 1, hi = 1000 + seq_along(n), n = n),
      bucket_us = 1, overflow = overflow, overflow_from_us = 4000)
    psnap_shown(h)$note
  }
  expect_null(caption(1000, 0))
  expect_equal(caption(c(9995, 5), 0), "5 iterations (0.05%) longer than 1001 us are not shown")
  expect_equal(caption(c(700, 300), 300),
    "300 iterations (23%) of 4000 us or more, beyond the kernel's buckets, are not shown")
  expect_equal(caption(c(9990, 5), 5), paste("10 iterations (0.1%) longer than 1001 us are",
    "not shown, 5 of them 4000 us or more, beyond the kernel's buckets"))
  # every iteration beyond the buckets (ranks far oversubscribed): 100%, an empty plot
  expect_match(caption(numeric(), 50), "^50 iterations \\(100%\\) of 4000 us or more")
})
