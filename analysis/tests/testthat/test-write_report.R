# The processes whose parent is this one, ended and not yet reaped too
# (/proc/PID/stat: the parent is the 4th field)
child_processes <- function() {
  stats <- list.files("/proc", "^[0-9]+$", full.names = TRUE)
  parents <- vapply(stats, function(p) {
    line <- tryCatch(readLines(file.path(p, "stat"), warn = FALSE), error = function(e) "")
    as.numeric(strsplit(sub(".*\\) ", "", line), " ")[[1]][2])
  }, 0)
  as.numeric(basename(stats[!is.na(parents) & parents == Sys.getpid()]))
}

test_that("the report holds the page, the figures and the tables", {
  dir <- synthetic_results()
  page <- write_report(dir, pdf = FALSE)
  out <- file.path(dir, "report")
  expect_equal(page, file.path(out, "index.html"))
  files <- list.files(out)
  expect_true(all(c("index.html", "summary.csv", "peaks.csv", "psnap_runs.csv",
    "psnap_cores.csv", "selfish.csv") %in% files))
  pngs <- grep("\\.png$", files, value = TRUE)
  # a figure for the runs it compares, not a set a run
  for (figure in c("system-1", "noise-over-time", "scaled-noise", "spectra",
    "psnap-iterations", "detours", "scale")) {
    expect_true(paste0(figure, ".png") %in% pngs, label = figure)
  }
  expect_false(any(grepl("^(fwq|ftq_10khz|psnap|selfish)-(histogram|series|heatmap|spectrum)",
    pngs)))
  # every figure is a PNG of some size and is shown on the page
  html <- paste(readLines(page), collapse = "\n")
  for (p in pngs) {
    expect_gt(file.size(file.path(out, p)), 5000)
    expect_match(html, p, fixed = TRUE)
  }
  expect_match(html, paste("do not meet the default requirements (Sequoia's diminutive noise):",
    "1 of the 2 threads judged fail them"), fixed = TRUE)
  expect_match(html, "test CPU", fixed = TRUE)
  expect_length(list.files(dir, "^\\.report"), 0)
})

test_that("summary.csv has a row per kernel and thread with the noise measured", {
  dir <- synthetic_results()
  write_report(dir, pdf = FALSE)
  s <- fread(file.path(dir, "report", "summary.csv"))
  expect_true(all(c("kernel", "thread", "cpu", "samples", "scaled_noise_mean",
    "scaled_noise_sd", "kurtosis", "skewness", "noise_percent", "meets", "unmet_rules") %in% names(s)))
  expect_equal(nrow(s), 10)
  fwq <- s[kernel == "fwq"]
  expect_equal(fwq$scaled_noise_mean, c(0.01, 0))
  expect_equal(fwq$meets, c(FALSE, TRUE))
  # FTQ: a hit of 500 counts every 20 (14) quanta of 1000
  expect_equal(s[run == "ftq_10khz"]$noise_percent, rep(2.5, 2))
  expect_equal(s[run == "ftq_7khz"]$noise_percent, rep(100 / 28, 2))
  expect_equal(s[kernel == "selfish"]$noise_percent, c(0.2495, 0.22475))
})

test_that("peaks.csv names the injected 500 Hz external", {
  dir <- synthetic_results()
  write_report(dir, pdf = FALSE)
  p <- fread(file.path(dir, "report", "peaks.csv"))
  expect_equal(names(p)[1:4], c("frequency_hz", "power", "share_percent", "origin"))
  at_500 <- p[abs(frequency_hz - 500) < 5]
  expect_equal(sort(unique(at_500$run)), c("ftq_10khz", "ftq_7khz"))
  expect_true(all(at_500$origin == "external"))
  # half a quantum every 20 (14) quanta; at 7 kHz the line falls between two
  # bins and leaks 5% of its power past the 3 summed either side
  expect_equal(at_500[run == "ftq_10khz"]$share_percent, rep(2.5, 2), tolerance = 0.02)
  expect_equal(at_500[run == "ftq_7khz"]$share_percent, rep(100 / 28, 2), tolerance = 0.04)
})

test_that("bad input writes no report and keeps the previous one", {
  dir <- synthetic_results()
  write_report(dir, pdf = FALSE)
  before <- readLines(file.path(dir, "report", "index.html"))
  writeLines(c("1000", "oops"), file.path(dir, "fwq_1_times.dat"))
  expect_error(write_report(dir, pdf = FALSE), "fwq_1_times.dat:2: 'oops' is not a number")
  expect_equal(readLines(file.path(dir, "report", "index.html")), before)
  expect_length(list.files(dir, "^\\.report", all.files = TRUE), 0)
  unlink(file.path(dir, "report"), recursive = TRUE)
  expect_error(write_report(dir, pdf = FALSE), "oops")
  expect_false(dir.exists(file.path(dir, "report")))
})

test_that("a failure while writing leaves no half-written report", {
  dir <- synthetic_results()
  # a figure that cannot be drawn, after the tables have been written
  ns <- asNamespace("noisebench")
  old <- ns$save_plot
  unlockBinding("save_plot", ns)
  assign("save_plot", function(...) stop("drawing failed"), envir = ns)
  on.exit({
    assign("save_plot", old, envir = ns)
    lockBinding("save_plot", ns)
  }, add = TRUE)
  before <- child_processes()
  expect_error(write_report(dir, pdf = FALSE), "drawing failed")
  expect_false(dir.exists(file.path(dir, "report")))
  expect_length(list.files(dir, "^\\.report", all.files = TRUE), 0)
  # the slowdown model's workers, started before the figures, ended and
  # reaped with the report
  expect_equal(setdiff(child_processes(), before), numeric())
})
