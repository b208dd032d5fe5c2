# The catalogue the package reads, and the simulator it finds.

test_that("NOISEBENCH_KERNELS names the catalogue, else the installed copy", {
  withr_env <- function(value, code) {
    old <- Sys.getenv("NOISEBENCH_KERNELS", unset = NA)
    on.exit(if (is.na(old)) Sys.unsetenv("NOISEBENCH_KERNELS") else
      Sys.setenv(NOISEBENCH_KERNELS = old))
    if (is.na(value)) Sys.unsetenv("NOISEBENCH_KERNELS") else Sys.setenv(NOISEBENCH_KERNELS = value)
    code
  }
  expect_identical(withr_env("/x/kernels.json", catalogue_path()), "/x/kernels.json")
  installed <- withr_env(NA, catalogue_path())
  expect_identical(installed, system.file("kernels.json", package = "noisebench"))
  expect_true(file.exists(installed))
  # what the package bound at load is that file's
  expect_identical(noisebench_kernels, jsonlite::fromJSON(installed, simplifyVector = FALSE))
  expect_identical(cause_classes, unlist(noisebench_kernels$cause_classes))
})

test_that("NOISEBENCH_SIMULATE names the simulator when it exists", {
  old <- Sys.getenv("NOISEBENCH_SIMULATE", unset = NA)
  on.exit(if (is.na(old)) Sys.unsetenv("NOISEBENCH_SIMULATE") else
    Sys.setenv(NOISEBENCH_SIMULATE = old))
  fake <- tempfile("noise-simulate")
  writeLines("#!/bin/sh", fake)
  Sys.setenv(NOISEBENCH_SIMULATE = fake)
  expect_identical(find_program("noise-simulate", "NOISEBENCH_SIMULATE"), normalizePath(fake))
  unlink(fake)
  found <- find_program("noise-simulate", "NOISEBENCH_SIMULATE")
  expect_true(is.na(found) || file.exists(found))
  expect_false(identical(found, normalizePath(fake, mustWork = FALSE)))
})
