# Loads noisebench for the command lines beside this file: the package as
# this checkout's build installed it, else the library these files were
# installed in (PREFIX/lib/R/noisebench/), else R's own.
local({
  script <- sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))
  .libPaths(c(file.path(dirname(script), "..", "..", "build", "lib", "R"),
    dirname(dirname(normalizePath(script))), .libPaths()))
})
suppressPackageStartupMessages({
  library(data.table)
  library(noisebench)
})
