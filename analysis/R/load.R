# Loads the analysis functions (every other file in this directory) and the
# packages they use.
load_analysis <- function(dir) {
  suppressPackageStartupMessages({
    library(data.table)
    library(ggplot2)
  })
  # every core unless the user said how many (data.table's own default is half)
  if (!nzchar(Sys.getenv("R_DATATABLE_NUM_THREADS"))) setDTthreads(0)
  # what the harness knows of each kernel (kernels.R), before the files that use it
  assign("noisebench_kernels", jsonlite::fromJSON(
    file.path(dir, "..", "..", "src", "kernels", "kernels.json"), simplifyVector = FALSE
  ), envir = globalenv())
  # the simulator scale.R reports where its model does not hold: the one
  # named, the one on PATH (an install), or this checkout's build
  assign("noisebench_simulator", Filter(function(f) nzchar(f) && file.exists(f), c(
    Sys.getenv("NOISEBENCH_SIMULATE"), Sys.which("noise-simulate"),
    file.path(dir, "..", "..", "build", "bin", "noise-simulate")
  ))[1], envir = globalenv())
  for (f in setdiff(list.files(dir, "\\.R$", full.names = TRUE), file.path(dir, "load.R"))) {
    source(f)
  }
}
