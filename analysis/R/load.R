# Loads the analysis functions (every other file in this directory) and the
# packages they use.
load_analysis <- function(dir) {
  suppressPackageStartupMessages({
    library(data.table)
    library(ggplot2)
  })
  setDTthreads(0)
  for (f in setdiff(list.files(dir, "\\.R$", full.names = TRUE), file.path(dir, "load.R"))) {
    source(f)
  }
}
