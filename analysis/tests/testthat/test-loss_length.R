# The run's loss by length: the kernel's summed histogram read as shares of
# the CPU time and rates per core-hour, and drawn in the report.

histogram_run <- function(dir) {
  write_fwq(dir, "fwq", list(rep(10000, 100), rep(10000, 100)))
  path <- file.path(dir, "fwq.json")
  meta <- jsonlite::fromJSON(path, simplifyVector = FALSE)
  # two CPUs over 1 s each: 7,000 samples below 100 ns, 1,000 of 1-2 us
  # (1.5 ms lost) and one of 10 s and beyond (20 ms lost)
  edges <- c(1, 2, 5) * rep(10^(2:9), each = 3)
  meta$loss_histogram <- list(participants = 2, seconds = 2,
    edges_ns = c(edges, 1e10), samples = c(7000, 0, 0, 0, 1000, rep(0, 20), 1),
    lost_ns = c(0, 0, 0, 0, 1.5e6, rep(0, 20), 2e7))
  write_json_run(dir, "fwq", meta)
  read_results(dir)$runs
}

test_that("each bucket's samples become shares of the time and rates per core-hour", {
  lengths <- loss_by_length(histogram_run(withr_tempdir()))
  expect_equal(lengths$from_us, c(0, 1, 1e7))
  expect_equal(lengths$to_us, c(0.1, 2, Inf))
  expect_equal(lengths$samples, c(7000, 1000, 1))
  expect_equal(lengths$per_core_hour, c(7000, 1000, 1) * 1800)
  expect_equal(lengths$lost_percent, c(0, 0.075, 1))
  expect_equal(length_label(lengths$from_us, lengths$to_us),
    c("below 100 ns", "1 us to 2 us", "10 s and beyond"))
})

test_that("a run without the histogram has no rows", {
  dir <- withr_tempdir()
  write_fwq(dir, "fwq", list(rep(10000, 100)))
  expect_equal(nrow(loss_by_length(read_results(dir)$runs)), 0)
})

test_that("the report draws it after the first screen and writes its table", {
  dir <- withr_tempdir()
  histogram_run(dir)
  write_report(dir, pdf = FALSE)
  expect_true(file.exists(file.path(dir, "report", "loss-by-length.png")))
  expect_equal(fread(file.path(dir, "report", "loss_by_length.csv"))$samples, c(7000, 1000, 1))
  page <- paste(readLines(file.path(dir, "report", "index.html")), collapse = "\n")
  # the first screen is the whole system and the summary; the figures follow
  expect_match(page, '<section id="summary">.*loss-by-length.png')
})
