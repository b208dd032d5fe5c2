#!/usr/bin/env Rscript
# Rscript analysis/inst/predict.R RUN_JSON|TRACE... [--phase-us T[,T...]] [--processes N[,N...]]
# The slowdown a bulk-synchronous application computing T us between global
# synchronisations of N processes would see under the noise a run measured
# (an FWQ, P-SNAP or selfish PREFIX.json), or under LogGOPSim noise traces
# (the report's loggopsim/*.txt, one per rank): analysis/R/scale.R's model,
# as CSV on stdout (mode, phase_us, processes, slowdown, phases_hit_percent,
# model_holds). Co-scheduled with N up to the run's ranks replays their
# traces together, process i on rank i, as they were measured.
args <- commandArgs(trailingOnly = TRUE)
usage <- function() {
  message("usage: ", Sys.getenv("NB_COMMAND", "Rscript analysis/inst/predict.R"), " RUN_JSON|TRACE... [--phase-us T[,T...]] ",
    "[--processes N[,N...]]")
  quit(status = 2)
}
if (length(args) == 0 || args[1] %in% c("-h", "--help")) usage()
inputs <- args[seq_len(match(TRUE, startsWith(args, "--"), nomatch = length(args) + 1) - 1)]
if (length(inputs) == 0) usage()
source(file.path(dirname(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))),
  "load_package.R"))

numbers <- function(flag, default) {
  at <- match(flag, args)
  if (is.na(at)) return(default)
  x <- suppressWarnings(as.numeric(strsplit(args[at + 1], ",", fixed = TRUE)[[1]]))
  if (anyNA(x) || any(x <= 0)) {
    message("predict.R: ", flag, " ", args[at + 1], ": positive numbers, comma-separated")
    quit(status = 2)
  }
  x
}
options <- args[-seq_along(inputs)]
flags <- options[seq(1, length.out = length(options) %/% 2, by = 2)]
if (length(options) %% 2 != 0 || !all(flags %in% c("--phase-us", "--processes"))) usage()
phases <- numbers("--phase-us", scale_phases_us)
processes <- numbers("--processes", scale_processes)

run_traces <- function(path) {
  kernel <- c(read_json_file(path)$kernel, "(no kernel)")[1]
  if (kernel_info(kernel, path)$fixed != "work") {
    stop_input(path, paste0("a ", kernel, " run has no noise trace (only fixed-work kernels have)"))
  }
  run <- read_run(path)
  lapply(seq_along(run$threads), function(i) noise_trace(run, i))
}

rows <- tryCatch({
  for (path in inputs) if (!file.exists(path)) stop_input(path, "no such file")
  traces <- if (length(inputs) == 1 && grepl("[.]json$", inputs)) {
    run_traces(inputs)
  } else {
    lapply(inputs, read_noise_trace)
  }
  p <- predict_slowdown(traces, phases_us = phases, processes = processes,
    simulate_up_to = max(processes))
  if (nrow(p) == 0) {
    stop_input(inputs[1], sprintf("the trace (%.3g s) is too short for phases of %s us",
      min(vapply(traces, trace_seconds, 0)), paste(phases, collapse = ",")))
  }
  p
}, error = function(e) {
  message("predict.R: ", conditionMessage(e))
  quit(status = 1)
})
fwrite(rows, "")
