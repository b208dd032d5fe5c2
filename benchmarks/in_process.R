# A step timed in an R process of its own, as report.R runs: a fresh heap,
# nothing read before it cached in R. A script sources this, then calls
# time_if_asked first: run as `SCRIPT --time WHAT DIR` it is the child.

# The child: steps[[WHAT]](DIR), then its seconds and the process's peak
# resident memory (MiB, VmHWM) printed, and the process ends.
time_if_asked <- function(args, steps) {
  if (length(args) != 3 || args[1] != "--time") return(invisible())
  seconds <- system.time(steps[[args[2]]](args[3]))[["elapsed"]]
  status <- readLines("/proc/self/status")
  peak_kib <- as.numeric(gsub("[^0-9]", "", grep("^VmHWM", status, value = TRUE)))
  cat(seconds, peak_kib / 1024, "\n")
  quit(save = "no")
}

# The parent: c(seconds, peak MiB) of WHAT on DIR in a child of script
timed <- function(script, what, dir) {
  rscript <- file.path(R.home("bin"), "Rscript")
  out <- suppressWarnings(system2(rscript, c(shQuote(script), "--time", what, shQuote(dir)),
    stdout = TRUE, stderr = FALSE))
  if (!is.null(attr(out, "status"))) stop(sprintf("%s of %s failed", what, dir), call. = FALSE)
  as.numeric(strsplit(trimws(out[length(out)]), " ")[[1]])
}
