#!/usr/bin/env Rscript
# Runs the analysis tests on the package this checkout's build installed
# (make test-analysis): Rscript analysis/run_tests.R
script <- sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))
.libPaths(c(file.path(dirname(script), "..", "build", "lib", "R"), .libPaths()))
testthat::test_dir(file.path(dirname(script), "tests", "testthat"), package = "noisebench",
  load_package = "installed", stop_on_failure = TRUE)
