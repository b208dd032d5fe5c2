#!/usr/bin/env Rscript
# Rscript analysis/ftq_line.R RUN.json
# The strongest line of an FTQ run's spectrum over its ranks, as the
# report's peaks.csv has it: "largest_line frequency_hz=F share_percent=S"
# (F 0 and S 0 when no line stands out of the spectrum's floor). ReFrame's
# FTQ check reads its figures from here.
args <- commandArgs(trailingOnly = TRUE)
if (length(args) != 1 || args[1] %in% c("-h", "--help")) {
  message("usage: Rscript analysis/ftq_line.R RUN.json")
  quit(status = 2)
}
script <- sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))
# the package this checkout's build installed (make build), else R's own libraries
.libPaths(c(file.path(dirname(script), "..", "build", "lib", "R"), .libPaths()))
suppressPackageStartupMessages({
  library(data.table)
  library(noisebench)
})

tryCatch({
  if (!file.exists(args[1])) stop_input(args[1], "no such file")
  run <- read_run(args[1])
  if (run$kernel != "ftq") stop_input(args[1], sprintf("a %s run, not an FTQ run", run$kernel))
  peaks <- ftq_peak_table(list(run = run))$peaks
  best <- if (nrow(peaks)) peaks[which.max(share_percent)] else list(frequency_hz = 0,
    share_percent = 0)
  cat(sprintf("largest_line frequency_hz=%.6g share_percent=%.6g\n", best$frequency_hz,
    best$share_percent))
}, error = function(e) {
  message("ftq_line.R: ", conditionMessage(e))
  quit(status = 1)
})
