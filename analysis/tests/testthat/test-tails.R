# The tails: percentiles, maximum and rates per hour of the time each sample
# lost, on samples whose losses are known (loss_tails, as tails.h computes
# them; the C's own are checked against the data files in tests/test_outputs.py).

test_that("FWQ tails are the excess over the fastest sample, in us", {
  dir <- withr_tempdir()
  # 1 tick a ns: 100000 samples of 10 us; 50 lose 20 us, 5 lose 200 us, 1 loses 2 ms;
  # the 99.99th percentile (type 1) is the 99990th smallest loss: one of the 50
  ticks <- c(rep(10000, 100000 - 56), rep(30000, 50), rep(210000, 5), 2010000)
  write_fwq(dir, "fwq", list(sample(ticks)))
  tails <- tail_table(read_results(dir)$runs)
  expect_equal(tails$samples, 100000)
  expect_equal(tails$p50_us, 0)
  expect_equal(tails$p99_us, 0)
  expect_equal(tails$p99_9_us, 0) # 56 of 100000 lose time: above the 99.9th
  expect_equal(tails$p99_99_us, 20)
  expect_equal(tails$max_us, 2000)
  hours <- sum(ticks) / 1e9 / 3600
  expect_equal(tails$above_10us_per_hour, 56 / hours)
  expect_equal(tails$above_100us_per_hour, 6 / hours)
  expect_equal(tails$above_1000us_per_hour, 1 / hours)
})

test_that("FTQ loss is the quantum's missing work as time", {
  dir <- withr_tempdir()
  # 10 kHz: 100 us quanta of 1000 loops at best; one quantum does 500 (50 us lost)
  counts <- c(rep(1000, 9999), 500)
  write_ftq(dir, "ftq", list(counts), 10000)
  tails <- tail_table(read_results(dir)$runs)
  expect_equal(tails$max_us, 50)
  expect_equal(tails$seconds, 1)
  expect_equal(tails$above_10us_per_hour, 3600)
  expect_equal(tails$above_100us_per_hour, 0)
})

test_that("the tails are the kernel's own, read from its JSON, not its samples", {
  dir <- withr_tempdir()
  write_fwq(dir, "fwq", list(c(rep(1000, 999), 5000)))
  path <- file.path(dir, "fwq.json")
  meta <- jsonlite::fromJSON(path, simplifyVector = FALSE)
  meta$ranks[[1]]$tails$max_us <- 123
  meta$ranks[[1]]$tails$p50_us <- NULL # no samples to take it of: null
  write_json_run(dir, "fwq", meta)
  tails <- tail_table(read_results(dir)$runs)
  expect_equal(tails$max_us, 123)
  expect_true(is.na(tails$p50_us))
  expect_equal(tails$samples, 1000)
  meta$ranks[[1]]$tails$histogram <- NULL
  write_json_run(dir, "fwq", meta)
  expect_error(tail_table(read_results(dir)$runs), "fwq.json: .*tails.histogram",
    class = "noisebench_input_error")
})

test_that("the report has the tails table", {
  dir <- withr_tempdir()
  write_fwq(dir, "fwq", list(c(rep(1000, 999), 5000)))
  page <- paste(readLines(write_report(dir, pdf = FALSE)), collapse = "\n")
  expect_match(page, "<caption>Tails per run and CPU")
  tails <- fread(file.path(dir, "report", "tails.csv"))
  expect_equal(tails$max_us, 4)
})
