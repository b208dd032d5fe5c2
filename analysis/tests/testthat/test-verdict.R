# The first screen's sentences read the tables' figures: what the system
# took of the median CPU with its interval, the parts adding up, and the
# work's own slowdown beside it, named as the work's.

split_fields <- function(stolen, slowdown, variation) {
  lapply(seq_along(stolen), function(i) list(stolen_percent = stolen[i],
    stolen_ci95_low = stolen[i] - 0.5, stolen_ci95_high = stolen[i] + 0.5,
    slowdown_percent = slowdown[i], variation_percent = variation[i],
    lost_percent = stolen[i] + slowdown[i] + variation[i]))
}

test_that("the verdict's share is the median CPU's of the key figures, its parts adding up", {
  dir <- withr_tempdir()
  # three CPUs: the system took 1.5, 2.25 and 4 %; the work slowed by 0, 0.25, 1
  write_fwq(dir, "fwq", list(1000 + 0:99, 1000 + 0:99, 1000 + 0:99),
    fields = split_fields(c(1.5, 2.25, 4), c(0, 0.25, 1), c(0.5, 3, 0.1)))
  runs <- read_results(dir)$runs
  summary <- noise_summary(runs$fwq, "fwq")
  expect_equal(summary$lost_percent, summary$stolen_percent + summary$slowdown_percent +
    summary$variation_percent)
  # the headline ranks every table
  expect_equal(summary$noise_percent, summary$stolen_percent)
  spread <- system_spread(summary, NULL)
  expect_equal(spread$stolen_median_percent, 2.25)
  expect_equal(spread$slowdown_median_percent, 0.25)
  expect_equal(spread$variation_median_percent, 3)
  expect_equal(spread$lost_median_percent, 5.5)
  words <- share_sentence(summary, "")
  expect_match(words, "The system takes 2.25% of each CPU (the median of the 3 CPUs measured, 95% interval 1.75% to 2.75%)", fixed = TRUE)
  expect_match(words, "2.75%\\), 4% of the worst, [^:]+:2\\.")
  # the slowdown is the work's, apart from the headline
  expect_match(words, "the work's, not the system's: MULTIITER 0.25%.", fixed = TRUE)
  # the page says the same as the table beside it
  page <- paste(readLines(write_report(dir, pdf = FALSE)), collapse = "\n")
  expect_match(page, "The system takes 2.25% of each CPU", fixed = TRUE)
  key <- fread(file.path(dir, "report", "summary.csv"))
  expect_equal(sort(key$stolen_percent), c(1.5, 2.25, 4))
})

test_that("a probe too coarse for the threshold says so on the first screen", {
  dir <- withr_tempdir()
  fields <- split_fields(c(1.5, 2.25, 4), c(0, 0.25, 1), c(0.5, 3, 0.1))
  fields <- Map(function(f, coarse, resolution) c(f, list(coarse = coarse,
    resolution_us = resolution, threshold_us = 1)), fields, c(FALSE, TRUE, TRUE), c(0.05, 2.5, 31))
  write_fwq(dir, "fwq", list(1000 + 0:99, 1000 + 0:99, 1000 + 0:99), fields = fields)
  summary <- noise_summary(read_results(dir)$runs$fwq, "fwq")
  words <- share_sentence(summary, "")
  expect_match(words, paste("On 2 of the 3 CPUs the probe cannot see every loss of 1 \u00b5s",
    "(its resolution is up to 31 \u00b5s): what it gives there may be low."), fixed = TRUE)
  # a probe fine enough says nothing of it
  summary[, coarse := FALSE]
  expect_no_match(share_sentence(summary, ""), "cannot see", fixed = TRUE)
})

test_that("a run whose kernel does not split its loss says so", {
  dir <- withr_tempdir()
  write_fwq(dir, "fwq", list(1000 + 0:99, 1100 + 0:99))
  runs <- read_results(dir)$runs
  summary <- noise_summary(runs$fwq, "fwq")
  words <- share_sentence(summary, "")
  expect_match(words, "^Each CPU loses [0-9.]+% of its time \\(the median of the 2 CPUs")
  expect_match(words, "does not tell the system's share from the work's own variation")
  expect_equal(median_cpu(c(3, 1, 2, 4)), 2) # the lower of the middle two: one CPU's
  expect_true(is.na(median_cpu_at(c(NA_real_, NA_real_))))
})
