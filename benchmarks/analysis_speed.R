#!/usr/bin/env Rscript
# Time to analyse 10 million samples next to the time fread alone takes to
# read the same files (goal: at most 3x).
#   Rscript benchmarks/analysis_speed.R [SAMPLES]
# Each figure is timed in an R process of its own, as report.R runs: a fresh
# process pays for every page its data takes, and one that has just freed
# the same data would not (fread timed after fread reuses the memory; an
# analysis keeping its last run alive does not). Each process first does the
# same on 10^4 samples: what R pays once (compiling functions, loading
# namespaces) is printed apart. Five rounds, every figure once a round, so
# that the machine's bursts fall on all of them; the medians.
script <- sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))
.libPaths(c(file.path(dirname(script), "..", "build", "lib", "R"), .libPaths()))
suppressPackageStartupMessages({
  library(data.table)
  library(noisebench)
})
args <- commandArgs(trailingOnly = TRUE)

fwq_files <- function(dir) file.path(dir, sprintf("fwq_%d_times.dat", 0:1))
ftq_files <- function(dir) {
  file.path(dir, sprintf("ftq_%d_%s.dat", rep(0:1, each = 2), c("counts", "times")))
}
fread_all <- function(files) {
  for (f in files) data.table::fread(f, header = FALSE, showProgress = FALSE)
}
statistics <- function(json, kernel) {
  run <- read_run(json)
  noise_summary(run, kernel)
  noise_over_time(run)
}
# what each figure times, in the process that runs it
timed <- list(
  fread_fwq = function(dir) function() fread_all(fwq_files(dir)),
  read_fwq = function(dir) function() read_run(file.path(dir, "fwq.json")),
  fwq = function(dir) function() statistics(file.path(dir, "fwq.json"), "fwq"),
  fread_ftq = function(dir) function() fread_all(ftq_files(dir)),
  ftq = function(dir) function() statistics(file.path(dir, "ftq.json"), "ftq"),
  # the spectra of a run read beforehand
  ftq_spectra = function(dir) {
    run <- read_run(file.path(dir, "ftq.json"))
    function() peak_table(list(ftq = run))
  },
  # the tails, the slowdown at scale and a comparison (with itself) of a run
  # read beforehand
  fwq_tails = function(dir) {
    run <- read_run(file.path(dir, "fwq.json"))
    function() tail_table(list(fwq = run))
  },
  fwq_scale = function(dir) {
    run <- read_run(file.path(dir, "fwq.json"))
    function() scale_table(list(fwq = run))
  },
  fwq_compare = function(dir) {
    runs <- list(fwq = read_run(file.path(dir, "fwq.json")))
    function() compare_table(runs, runs)
  }
)

# --time WHAT SMALL_DIR DIR: prints the seconds WHAT takes on SMALL_DIR's
# samples, the first time in this process, then on DIR's
if (length(args) == 4 && args[1] == "--time") {
  seconds <- function(dir) {
    f <- timed[[args[2]]](dir)
    system.time(f())[["elapsed"]]
  }
  cat(seconds(args[3]), seconds(args[4]), "\n")
  quit(save = "no")
}

samples <- if (length(args)) as.numeric(args[1]) else 1e7
# the tests' writers of synthetic runs, which use the package's internals
helpers <- new.env(parent = asNamespace("noisebench"))
sys.source(file.path(dirname(script), "..", "analysis", "tests", "testthat",
  "helper-synthetic.R"), envir = helpers)
# two threads of FWQ samples around 180k ticks with exponential noise, and
# the same count of FTQ quanta
write_runs <- function(samples) {
  dir <- tempfile("nb-bench-")
  dir.create(dir)
  half <- samples / 2
  helpers$write_fwq(dir, "fwq",
    lapply(1:2, function(i) round(181324 + stats::rexp(half, 1 / 2000))))
  helpers$write_ftq(dir, "ftq", lapply(1:2, function(i) helpers$impulse_counts(half, 20)), 10000,
    tpn = 2.6)
  dir
}
set.seed(1)
small <- write_runs(1e4)
dir <- write_runs(samples)

rscript <- file.path(R.home("bin"), "Rscript")
time_in_process <- function(what) {
  out <- suppressWarnings(system2(rscript,
    c(shQuote(script), "--time", what, shQuote(small), shQuote(dir)), stdout = TRUE))
  if (!is.null(attr(out, "status"))) {
    stop(sprintf("timing %s: Rscript exited with %d", what, attr(out, "status")), call. = FALSE)
  }
  as.numeric(strsplit(trimws(out[length(out)]), " ")[[1]])
}
rounds <- 5
first <- times <- sapply(names(timed), function(what) numeric(rounds))
for (i in seq_len(rounds)) {
  for (what in names(timed)) {
    both <- time_in_process(what)
    first[i, what] <- both[1]
    times[i, what] <- both[2]
  }
}
unlink(c(small, dir), recursive = TRUE)
s <- apply(times, 2, stats::median)
once <- apply(first, 2, stats::median)

cat(sprintf("analysis of %.0f samples (2 threads), median elapsed seconds of %d processes each, data.table threads %d\n",
  samples, rounds, getDTthreads()))
report <- function(what, base, analysed) {
  cat(sprintf("%-44s fread %6.2f s  analysis %6.2f s  ratio %5.2f (goal <= 3)\n", what, base,
    analysed, analysed / base))
}
report("FWQ: read, check, moments, heat map", s[["fread_fwq"]], s[["fwq"]])
report("FTQ: read, check, moments, heat map", s[["fread_ftq"]], s[["ftq"]])
report("FTQ: spectra and peaks of the run read", s[["fread_ftq"]], s[["ftq_spectra"]])
report("FTQ: all of the above", s[["fread_ftq"]], s[["ftq"]] + s[["ftq_spectra"]])
report("FWQ: tails of the run read", s[["fread_fwq"]], s[["fwq_tails"]])
report("FWQ: slowdown at scale of the run read", s[["fread_fwq"]], s[["fwq_scale"]])
report("FWQ: compare A B (both read, as two runs)", 2 * s[["fread_fwq"]], s[["fwq_compare"]])
report("FWQ: report's share (read, moments, tails, scale)", s[["fread_fwq"]],
  s[["fwq"]] + s[["fwq_tails"]] + s[["fwq_scale"]])
# the same share with the reader's own read (checks, value table) as the base
past_read <- s[["fwq"]] - s[["read_fwq"]] + s[["fwq_tails"]] + s[["fwq_scale"]]
cat(sprintf("%-44s read   %6.2f s  analysis %6.2f s  ratio %5.2f\n",
  "FWQ: moments, tails, scale of the run read", s[["read_fwq"]], past_read,
  past_read / s[["read_fwq"]]))
cat(sprintf("once a process, before the above: the first FWQ analysis (10^4 samples) %.2f s, FTQ %.2f s, FTQ spectra %.2f s\n",
  once[["fwq"]], once[["ftq"]], once[["ftq_spectra"]]))
