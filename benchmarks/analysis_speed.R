#!/usr/bin/env Rscript
# Time to analyse 10 million samples next to the time fread alone takes to
# read the same files, measured in the same run (goal: at most 3x).
#   Rscript benchmarks/analysis_speed.R [SAMPLES]
args <- commandArgs(trailingOnly = TRUE)
samples <- if (length(args)) as.numeric(args[1]) else 1e7
script <- sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))
analysis <- file.path(dirname(script), "..", "analysis")
source(file.path(analysis, "R", "load.R"))
load_analysis(file.path(analysis, "R"))
source(file.path(analysis, "tests", "testthat", "helper-synthetic.R"))

dir <- tempfile("nb-bench-")
dir.create(dir)
on.exit(unlink(dir, recursive = TRUE))
set.seed(1)
half <- samples / 2
# two threads of FWQ samples around 180k ticks with exponential noise, and
# the same count of FTQ quanta
write_fwq(dir, "fwq", lapply(1:2, function(i) round(181324 + stats::rexp(half, 1 / 2000))))
write_ftq(dir, "ftq", lapply(1:2, function(i) impulse_counts(half, 20)), 10000, tpn = 2.6)

# the median of five runs: the first of anything here pays for cold caches
# and fresh pages, and this machine's noise comes in bursts
seconds <- function(expr, runs = 5) {
  expr <- substitute(expr)
  env <- parent.frame()
  stats::median(vapply(seq_len(runs), function(i) {
    invisible(gc())
    unname(system.time(eval(expr, env))[["elapsed"]])
  }, numeric(1)))
}
fread_all <- function(files) {
  for (f in files) data.table::fread(f, header = FALSE, showProgress = FALSE)
}
fwq_files <- file.path(dir, sprintf("fwq_%d_times.dat", 0:1))
ftq_files <- file.path(dir, sprintf("ftq_%d_%s.dat", rep(0:1, each = 2), c("counts", "times")))

cat(sprintf("analysis of %.0f samples (2 threads), median elapsed seconds of 5, data.table threads %d\n",
  samples, getDTthreads()))
report <- function(what, base, analysed) {
  cat(sprintf("%-44s fread %6.2f s  analysis %6.2f s  ratio %5.2f (goal <= 3)\n", what, base,
    analysed, analysed / base))
}
base <- seconds(fread_all(fwq_files))
analysed <- seconds({
  run <- read_run(file.path(dir, "fwq.json"))
  noise_summary(run, "fwq")
  noise_over_time(run)
})
report("FWQ: read, check, moments, heat map", base, analysed)

base <- seconds(fread_all(ftq_files))
run <- read_run(file.path(dir, "ftq.json"))
analysed <- seconds({
  run <- read_run(file.path(dir, "ftq.json"))
  noise_summary(run, "ftq")
  noise_over_time(run)
})
report("FTQ: read, check, moments, heat map", base, analysed)
# the spectra alone: FFTs of 2^17 quanta, next to the same fread
spectra <- seconds(ftq_peak_table(list(ftq = run)))
report("FTQ: spectra and peaks of the run read", base, spectra)
report("FTQ: all of the above", base, analysed + spectra)
