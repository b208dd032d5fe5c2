test_that("scaled noise is (t - min) / min", {
  expect_equal(scaled_noise(c(100, 110, 200)), c(0, 0.1, 1))
})

test_that("moments of a small sample are exact", {
  m <- noise_moments(c(0, 0, 0, 1))
  expect_equal(m$scaled_noise_mean, 0.25)
  expect_equal(m$scaled_noise_sd, 0.5)
  expect_equal(m$skewness, 0.09375 / 0.1875^1.5)
  expect_equal(m$kurtosis, 0.08203125 / 0.1875^2)
  expect_true(is.nan(noise_moments(rep(2, 10))$kurtosis))
})

test_that("moments of known distributions come out as theory says", {
  set.seed(1)
  normal <- noise_moments(stats::rnorm(1e6))
  expect_equal(normal$kurtosis, 3, tolerance = 0.02)
  expect_equal(normal$skewness, 0, tolerance = 0.01)
  expo <- noise_moments(stats::rexp(1e6))
  expect_equal(expo$skewness, 2, tolerance = 0.05)
  expect_equal(expo$kurtosis, 9, tolerance = 0.1)
  uni <- noise_moments(stats::runif(1e6))
  expect_equal(uni$kurtosis, 1.8, tolerance = 0.01)
  expect_equal(uni$scaled_noise_sd, sqrt(1 / 12), tolerance = 0.01)
})

test_that("whole counts are summed over their table, with the same moments and median", {
  set.seed(4)
  counts <- c(0, 0, round(1000 + stats::rexp(9999, 1 / 50)))
  table <- value_table(counts)
  expect_equal(sum(table$freq), length(counts))
  expect_equal(table$freq[table$value == 0], 2)
  expect_equal(noise_moments(table$value, table$freq), noise_moments(counts))
  expect_equal(median_of(counts), stats::median(counts))
  expect_equal(median_of(counts[-1]), stats::median(counts[-1]))
  # fractions, negative values and wide ranges are not tabulated
  expect_null(value_table(c(counts, 0.5)))
  expect_null(value_table(c(counts, -1)))
  expect_null(value_table(c(counts, 2e7)))
  expect_equal(median_of(c(1.5, 2.5, 10)), 2.5)
  # a table costs its largest value: few samples of large values are sorted
  expect_null(value_table(c(rep(1000, 100), 1e6)))
  # FWQ ticks: their sums pass the integers' range
  ticks <- c(rep(181324, 200000), 181400)
  expect_equal(noise_moments(value_table(ticks)$value, value_table(ticks)$freq),
    noise_moments(ticks))
})

test_that("a group meets the requirements when every judged thread does", {
  summary <- data.table(host = c("a", "a", "b", "b", "c"), meets = c(TRUE, FALSE, TRUE, TRUE, NA),
    unmet_rules = c("", "kurtosis < 100; scaled_noise_sd < 0.001", "", "", NA))
  v <- requirements_verdicts(summary, "host")
  # host c's thread was judged by no rule: no verdict, not a pass
  expect_equal(v$host, c("a", "b"))
  expect_equal(v$meets, c(FALSE, TRUE))
  expect_equal(v$failing, c(1L, 0L))
  expect_equal(v$verdict[1], "not met on 1 of 2 threads: kurtosis < 100; scaled_noise_sd < 0.001")
  # the page's numbers are for people, the file's e-notation is not
  expect_equal(rule_words("scaled_noise_mean < 1e-06 kernel=fwq; kurtosis <= 1e6"),
    "scaled_noise_mean < 0.000001 kernel=fwq; kurtosis <= 1,000,000")
  expect_equal(v$verdict[2], "met on all 2 threads")
  expect_equal(nrow(requirements_verdicts(summary[host == "c"])), 0)
})

test_that("FWQ noise is the share of time not spent on the work", {
  dir <- withr_tempdir()
  # every 10th sample 10% longer: 1 in 101 of the time lost
  ticks <- rep(1000, 10000)
  ticks[seq(1, 10000, by = 10)] <- 1100
  write_fwq(dir, "fwq", list(ticks, rep(1000, 10000)))
  run <- read_run(file.path(dir, "fwq.json"))
  s <- noise_summary(run, "fwq")
  expect_equal(s$noise_percent, c(100 * 0.01 / 1.01, 0))
  expect_equal(s$scaled_noise_mean, c(0.01, 0))
  # the kernel's verdict, read: the first rank fails the Sequoia mean
  expect_equal(s$meets, c(FALSE, TRUE))
  expect_equal(s$unmet_rules[1], "scaled_noise_mean < 1e-06 kernel=fwq; scaled_noise_sd < 0.001 kernel=fwq")
  expect_equal(s$samples, c(10000, 10000))
})

test_that("FTQ noise is the work missing against the best quantum", {
  dir <- withr_tempdir()
  counts <- rep(1000, 2000)
  counts[seq(1, 2000, by = 20)] <- 0
  write_ftq(dir, "ftq", list(counts), 10000)
  s <- noise_summary(read_run(file.path(dir, "ftq.json")), "ftq")
  expect_equal(s$noise_percent, 5)
})

test_that("the heat map puts the noise in the time bin it happened in", {
  dir <- withr_tempdir()
  ticks <- rep(1000, 1000)
  ticks[551:560] <- 2000
  write_fwq(dir, "fwq", list(ticks))
  over <- noise_over_time(read_run(file.path(dir, "fwq.json")), bins = 10)
  expect_equal(over[noise_percent > 0]$bin, 5)
  expect_equal(nrow(over), 10)
})

test_that("the stretches are the kernel's own, read from its JSON, not its samples", {
  dir <- withr_tempdir()
  write_fwq(dir, "fwq", list(rep(1000, 1000)))
  path <- file.path(dir, "fwq.json")
  meta <- jsonlite::fromJSON(path, simplifyVector = FALSE)
  s <- meta$ranks[[1]]$stretches
  expect_equal(unlist(s$n), rep(10, 100))
  expect_equal(s$width_s, 1e-5)
  # stretch 42 as though its 10 samples had taken twice as long
  s$sum[[43]] <- 20000
  meta$ranks[[1]]$stretches <- s
  write_json_run(dir, "fwq", meta)
  over <- noise_over_time(read_run(path))
  expect_equal(over[noise_percent > 0]$bin, 42)
  expect_equal(over[bin == 42]$noise_percent, 50)
  expect_equal(over[bin == 42]$time_s, 42.5e-5)
  # the rank's own figures are its stats: untouched
  expect_equal(noise_summary(read_run(path), "fwq")$noise_percent, 0)
  expect_error(noise_over_time(read_run(path), bins = 7), "must divide 100")
  meta$ranks[[1]]$stretches <- NULL
  write_json_run(dir, "fwq", meta)
  expect_error(noise_over_time(read_run(path)), "fwq.json: .*no stretches",
    class = "noisebench_input_error")
})

test_that("the moments are the kernel's own stats, read from its JSON, not its samples", {
  dir <- withr_tempdir()
  write_fwq(dir, "fwq", list(rep(c(1000, 1100), 500)))
  path <- file.path(dir, "fwq.json")
  s <- noise_summary(read_run(path), "fwq")
  expect_equal(s$scaled_noise_mean, 0.05)
  expect_equal(s$noise_percent, 100 * 50 / 1050)
  expect_equal(s$kurtosis, 1)
  meta <- jsonlite::fromJSON(path, simplifyVector = FALSE)
  meta$ranks[[1]]$stats$mean <- 1200
  meta$ranks[[1]]$stats$kurtosis <- NULL # a constant sample's: null
  write_json_run(dir, "fwq", meta)
  s <- noise_summary(read_run(path), "fwq")
  expect_equal(s$scaled_noise_mean, 0.2)
  expect_equal(s$noise_percent, 100 * 200 / 1200)
  expect_true(is.nan(s$kurtosis))
  meta$ranks[[1]]$stats <- NULL
  write_json_run(dir, "fwq", meta)
  expect_error(noise_summary(read_run(path), "fwq"), "fwq.json: .*no stats",
    class = "noisebench_input_error")
})

