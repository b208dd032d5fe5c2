# The machine's spectral lines: every CPU's own lines (the JSON's spectrum)
# counted together by frequency.

# counts around 1000 with a sinusoid of amplitude `a` at each of hz (one
# line each, reading a / 2 % of the count), over 20,000 quanta at 10 kHz
sinusoid_counts <- function(hz, a, seed) {
  set.seed(seed)
  t <- seq_len(20000) / 1e4
  x <- 1000 + stats::rnorm(length(t), sd = 2)
  for (k in seq_along(hz)) x <- x + a[k] * sin(2 * pi * hz[k] * t)
  round(x)
}

lines_run <- function(dir) {
  # a 250 Hz tick on every CPU of both hosts, a 625 Hz source on host b's
  counts <- list(sinusoid_counts(250, 20, 1), sinusoid_counts(250, 20, 2),
    sinusoid_counts(c(250, 625), c(20, 10), 3), sinusoid_counts(c(250, 625), c(20, 30), 4))
  write_ftq(dir, "ftq", counts, 1e4, hosts = c("a", "a", "b", "b"), cpus = c(0, 1, 0, 1))
  read_results(dir, "when_used")$runs
}

test_that("a line of every CPU and a line of one host are told apart", {
  lines <- machine_lines(lines_run(withr_tempdir()))
  tick <- lines[abs(frequency_hz - 250) < 1]
  expect_equal(nrow(tick), 1)
  expect_equal(c(tick$cpus, tick$cpus_percent, tick$hosts), c(4, 100, 2))
  # a sinusoid of amplitude 20 reads half of it, in % of the count of 1000
  expect_equal(tick$share_percent_median, 1, tolerance = 0.02)
  local <- lines[abs(frequency_hz - 625) < 1]
  expect_equal(c(local$cpus, local$cpus_percent, local$hosts), c(2, 50, 1))
  expect_equal(local$share_percent_max, 1.5, tolerance = 0.02)
  expect_equal(local$worst, "b:1")
  # the most common first
  expect_equal(lines$frequency_hz[1], tick$frequency_hz)
})

test_that("runs without lines have no rows, and the report writes lines.csv", {
  dir <- withr_tempdir()
  write_fwq(dir, "fwq", list(rep(10000, 100)))
  expect_equal(nrow(machine_lines(read_results(dir)$runs)), 0)
  lines_run(dir)
  write_report(dir, pdf = FALSE)
  written <- fread(file.path(dir, "report", "lines.csv"))
  expect_equal(written[abs(frequency_hz - 250) < 1]$cpus, 4)
  expect_match(paste(readLines(file.path(dir, "report", "index.html")), collapse = "\n"),
    "The lines of every CPU")
})

test_that("the two-frequency test tells the system's lines from the benchmark's", {
  # at 10 kHz and at 7 kHz, a 250 Hz source from outside on every CPU, and
  # one that repeats every 400 quanta, as the benchmark's own would: 25 Hz
  # at 10 kHz, 17.5 Hz at 7 kHz
  dir <- withr_tempdir()
  counts <- function(fs, seed) {
    set.seed(seed)
    i <- seq_len(2 * fs)
    round(1000 + stats::rnorm(length(i), sd = 2) + 20 * sin(2 * pi * 250 * i / fs) +
      10 * sin(2 * pi * i / 400))
  }
  write_ftq(dir, "ftq_10khz", list(counts(1e4, 1), counts(1e4, 2)), 1e4)
  write_ftq(dir, "ftq_7khz", list(counts(7e3, 3), counts(7e3, 4)), 7e3)
  lines <- machine_lines(read_results(dir, "when_used")$runs)
  at <- function(name, hz) lines[run == name & abs(frequency_hz - hz) < 0.5]
  expect_equal(at("ftq_10khz", 250)$origin, "external")
  expect_equal(at("ftq_7khz", 250)$origin, "external")
  expect_equal(at("ftq_10khz", 25)$origin, "artifact")
  expect_equal(at("ftq_7khz", 17.5)$origin, "artifact")
  expect_equal(at("ftq_7khz", 17.5)$partners, 1)
  # alone, a run has no partner to ask
  solo <- machine_lines(read_results(dir, "when_used")$runs["ftq_10khz"])
  expect_true(all(solo$origin == "unknown" & solo$partners == 0))
})
