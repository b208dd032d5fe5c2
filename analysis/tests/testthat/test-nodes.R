# Hosts kept apart: rows and figures per host, the verdict per host, the
# nodes table's outliers, and FTQ partners from the same host only.

test_that("a host noisier than the others is the outlier, the quiet ones are not", {
  dir <- withr_tempdir()
  hosts <- c("node1", "node1", "node2", "node2", "node3", "node3")
  ticks <- list(fwq_ticks(20000, 0.02, 1), fwq_ticks(20000, 0.03, 2), fwq_ticks(20000, 0.3, 3),
    fwq_ticks(20000, 0.3, 4), fwq_ticks(20000, 0.025, 5), fwq_ticks(20000, 0.02, 6))
  write_fwq(dir, "fwq", ticks, hosts = hosts, cpus = c(0, 1, 0, 1, 0, 1))
  runs <- read_results(dir)$runs
  summary <- noise_summary(runs$fwq, "fwq")
  expect_equal(summary$host, hosts)
  nodes <- node_table(runs, summary)
  expect_equal(nodes$host, c("node1", "node2", "node3"))
  expect_equal(nodes$ranks, c(2L, 2L, 2L))
  expect_equal(nodes[host == "node2"]$noise_percent, 30, tolerance = 0.05)
  expect_equal(nodes$outlier, c(FALSE, TRUE, FALSE))
  expect_gt(nodes[host == "node2"]$robust_z, outlier_z)
})

test_that("with two nodes, the injected one is flagged and the other is not", {
  dir <- withr_tempdir()
  write_fwq(dir, "fwq", list(fwq_ticks(20000, 0.04, 1), fwq_ticks(20000, 0.4, 2)),
    hosts = c("a", "b"), cpus = c(0, 0))
  runs <- read_results(dir)$runs
  nodes <- node_table(runs, noise_summary(runs$fwq, "fwq"))
  expect_equal(nodes$outlier, c(FALSE, TRUE))
  expect_lt(nodes[host == "a"]$robust_z, 0)
})

test_that("one host: no other host to compare, nothing flagged", {
  dir <- withr_tempdir()
  write_fwq(dir, "fwq", list(fwq_ticks(5000, 0.3, 1), fwq_ticks(5000, 0.01, 2)))
  runs <- read_results(dir)$runs
  nodes <- node_table(runs, noise_summary(runs$fwq, "fwq"))
  expect_equal(nrow(nodes), 1)
  expect_true(is.na(nodes$robust_z) && !nodes$outlier)
})

test_that("the requirements' verdict is per host, and injected ranks are left out", {
  dir <- withr_tempdir()
  quiet <- rep(1000, 5000)
  write_fwq(dir, "fwq", list(quiet, fwq_ticks(5000, 0.1, 1)), hosts = c("ok", "bad"))
  runs <- read_results(dir)$runs
  summary <- noise_summary(runs$fwq, "fwq")
  v <- host_verdicts(summary)
  expect_equal(v[host == "ok"]$meets, TRUE)
  expect_equal(v[host == "bad"]$meets, FALSE)
  expect_match(verdict_text(v), "not met on 1 of 2 hosts: bad")
  # the same noisy rank, injected: out of the verdict
  summary[host == "bad", inject := "1000:100"]
  v <- host_verdicts(summary)
  expect_equal(v$host, "ok")
  expect_match(verdict_text(v), "met on every host")
})

test_that("each rank's own injection decides whether it is injected", {
  dir <- withr_tempdir()
  write_fwq(dir, "fwq", list(rep(1000, 100), rep(1000, 100)), hosts = c("a", "b"))
  meta <- jsonlite::fromJSON(file.path(dir, "fwq.json"), simplifyVector = FALSE)
  meta$machines <- list(synthetic_machine, synthetic_machine)
  meta$ranks[[2]]$inject <- list(period_us = 1000, duration_us = 200)
  write_json_run(dir, "fwq", meta)
  runs <- read_results(dir)$runs
  expect_equal(noise_summary(runs$fwq, "fwq")$inject, c("none", "1000:200"))
})

test_that("an FTQ thread's partner is the same host's, whatever the ranks' order", {
  dir <- withr_tempdir()
  set.seed(7)
  # host a has a line at 500 Hz (every 20 quanta at 10 kHz, 14 at 7 kHz);
  # host b is quiet. The second run lists the hosts the other way round.
  a10 <- impulse_counts(40000, 20, depth = 300)
  a7 <- impulse_counts(28000, 14, depth = 300)
  quiet <- function(n) 2000 + stats::rpois(n, 3)
  write_ftq(dir, "f10", list(a10, quiet(40000)), 10000, hosts = c("a", "b"), cpus = c(0, 0))
  write_ftq(dir, "f7", list(quiet(28000), a7), 7000, hosts = c("b", "a"), cpus = c(0, 0))
  runs <- read_results(dir)$runs
  peaks <- peak_table(runs)$peaks
  at500 <- peaks[host == "a" & abs(frequency_hz - 500) < 0.5]
  expect_equal(sort(at500$origin), c("external", "external"))
  expect_true(all(peaks[host == "a"]$partner_run %in% c("f10", "f7")))
})

test_that("the report has a nodes table, a machine per host and host:cpu rows", {
  dir <- withr_tempdir()
  write_fwq(dir, "fwq", list(fwq_ticks(5000, 0.02, 1), fwq_ticks(5000, 0.3, 2)),
    hosts = c("node1", "node2"), cpus = c(0, 0))
  meta <- jsonlite::fromJSON(file.path(dir, "fwq.json"), simplifyVector = FALSE)
  meta$machines <- list(modifyList(synthetic_machine, list(hostname = "node1")),
    modifyList(synthetic_machine, list(hostname = "node2", kernel_release = "6.2")))
  write_json_run(dir, "fwq", meta)
  page <- paste(readLines(write_report(dir, pdf = FALSE)), collapse = "\n")
  report <- file.path(dir, "report")
  nodes <- fread(file.path(report, "nodes.csv"))
  expect_equal(nodes$host, c("node1", "node2"))
  expect_equal(nodes$outlier, c(FALSE, TRUE))
  machines <- fread(file.path(report, "machines.csv"), colClasses = "character")
  expect_equal(machines[host == "node2"]$kernel, "6.2")
  expect_equal(machines[host == "node1"]$kernel, "6.1")
  expect_equal(fread(file.path(report, "summary.csv"))$host, c("node1", "node2"))
  expect_match(page, "<caption>Nodes, the noisiest first: ")
  over_time <- noise_over_time(read_results(dir)$runs$fwq)
  expect_setequal(unique(unit_label(over_time$unit, over_time$cpu, over_time$host)),
    c("node1:0 (rank 0)", "node2:0 (rank 1)"))
})
