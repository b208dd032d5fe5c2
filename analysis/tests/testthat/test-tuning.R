test_that("every tuning warning is listed once, with the runs that gave it", {
  dir <- withr_tempdir()
  warning <- "irq 24 (ACPI:Ged) is delivered to CPU 1, which is nohz_full"
  for (prefix in c("a", "b")) {
    write_fwq(dir, prefix, list(1000 + 0:9))
    meta <- jsonlite::fromJSON(file.path(dir, paste0(prefix, ".json")), simplifyVector = FALSE)
    meta$tuning <- list(hz = "250", no_hz_full = "y", preempt = "voluntary",
      kernel_config = "/proc/config.gz", rcu_nocbs = "", transparent_hugepages = "madvise",
      irqbalance_running = FALSE, noisebench_commit = "0123456789ab", compiler = "12.2.0",
      mpi_library = "", warnings = if (prefix == "a") list(warning) else list(warning, "THP"))
    write_json_run(dir, prefix, meta)
  }
  runs <- read_results(dir)$runs
  f <- tuning_findings(runs)
  expect_equal(f$finding, c(warning, "THP"))
  expect_equal(f$runs, c("a b", "b"))
  page <- paste(readLines(write_report(dir, pdf = FALSE)), collapse = "\n")
  expect_match(page, "ACPI:Ged", fixed = TRUE)
  expect_match(page, "<td>HZ</td><td>250</td>", fixed = TRUE)
})
