#!/usr/bin/env Rscript
# Runs the analysis tests (make test): Rscript analysis/tests/run.R
script <- sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))
testthat::test_dir(file.path(dirname(script), "testthat"), stop_on_failure = TRUE)
