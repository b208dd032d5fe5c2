# with two workers whatever the machine has: the forked path is the one to test
with_two_cores <- function(code) {
  old <- setDTthreads(2)
  on.exit(setDTthreads(old))
  code
}

test_that("work done on several cores comes back in order, as lapply's", {
  with_two_cores({
    expect_equal(lapply_cores(1:5, function(i) i^2), lapply(1:5, function(i) i^2))
    # forked: not all in this process
    pids <- unlist(lapply_cores(1:2, function(i) Sys.getpid()))
    expect_false(all(pids == Sys.getpid()))
  })
})

test_that("an error in a worker is raised again with its class and message", {
  with_two_cores({
    err <- tryCatch(
      lapply_cores(1:2, function(i) if (i == 2) stop_input("f.dat", "cut short", 7) else i),
      error = identity
    )
    expect_s3_class(err, "noisebench_input_error")
    expect_equal(conditionMessage(err), "f.dat:7: cut short")
  })
})

test_that("a worker killed is an error, not a missing result", {
  with_two_cores({
    expect_error(
      suppressWarnings(lapply_cores(1:2, function(i) {
        if (i == 2) tools::pskill(Sys.getpid(), tools::SIGKILL)
        i
      })),
      "a worker process died"
    )
  })
})

test_that("no more workers than copies of this process the memory available holds", {
  dir <- withr_tempdir()
  status <- file.path(dir, "status")
  meminfo <- file.path(dir, "meminfo")
  writeLines(c("Name:\tR", "VmHWM:\t  9000 kB", "VmRSS:\t  1000 kB"), status)
  writeLines(c("MemTotal:  64000 kB", "MemAvailable:   3500 kB"), meminfo)
  expect_equal(memory_cores(status, meminfo), 3)
  writeLines("MemAvailable:   500 kB", meminfo)
  expect_equal(memory_cores(status, meminfo), 1)
  expect_equal(memory_cores(status, file.path(dir, "none")), Inf)
  # this process, on this machine: at least one, and a whole number
  n <- memory_cores()
  expect_true(n >= 1 && (is.infinite(n) || n == round(n)))
})

test_that("an R process of its own loads this package without ggplot2", {
  # the slowdown model's workers draw nothing: ggplot2 would add 0.6 s to
  # each one's start
  loaded <- start_r("loadNamespace('noisebench'); cat(loadedNamespaces(), sep = '\\n')")()
  expect_true("noisebench" %in% loaded)
  expect_false("ggplot2" %in% loaded)
})
