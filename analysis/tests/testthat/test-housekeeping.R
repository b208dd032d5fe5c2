# Reserved cores (--housekeeping): judged apart from the application's.

test_that("the housekeeping CPUs are judged apart, and the first screen says who took the noise", {
  dir <- withr_tempdir()
  # CPU 0, the housekeeping one, loses a 1000-tick detour every 10 samples;
  # CPUs 1-3, the application's, one every 100
  noisy <- function(every) {
    x <- rep(1000, 5000)
    x[seq(1, 5000, by = every)] <- 2000
    x
  }
  write_fwq(dir, "fwq", list(noisy(10), noisy(100), noisy(100), noisy(100)), cpus = 0:3)
  meta <- jsonlite::fromJSON(file.path(dir, "fwq.json"), simplifyVector = FALSE)
  meta$housekeeping_cpus <- list(0L)
  write_json_run(dir, "fwq", meta)
  runs <- read_results(dir)$runs
  summary <- with_roles(noise_summary(runs$fwq, "fwq"), runs)
  expect_equal(summary[order(cpu)]$role, c("housekeeping", rep("application", 3)))
  roles <- role_table(summary, tail_table(runs))
  expect_equal(roles$cpus, c(3, 1))
  expect_gt(roles[role == "housekeeping"]$noise_median_percent,
    5 * roles[role == "application"]$noise_median_percent)
  page <- paste(readLines(write_report(dir, pdf = FALSE)), collapse = "\n")
  expect_match(page, "application CPU loses [0-9.]+% of its time \\(the median of the 3 application CPUs")
  expect_match(page, "The system took [0-9.]+% of the 1 housekeeping CPU \\(0\\) \\(median\\), [0-9.]+% of the 3 application CPUs")
  expect_match(page, "the reserved CPUs take the noise")
  expect_true(file.exists(file.path(dir, "report", "roles.csv")))
  # the advice moves the system's work to the named housekeeping CPUs
  expect_equal(housekeeping_cpus(runs$fwq), "0")
})

test_that("without --housekeeping nothing changes", {
  dir <- withr_tempdir()
  write_fwq(dir, "fwq", list(rep(1000, 100), rep(1000, 100)))
  runs <- read_results(dir)$runs
  summary <- noise_summary(runs$fwq, "fwq")
  expect_identical(with_roles(summary, runs), summary)
  expect_equal(nrow(role_table(summary, NULL)), 0)
})
