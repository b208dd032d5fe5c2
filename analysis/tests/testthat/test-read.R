# Each bad input stops the analysis with one line naming the file (and the
# line where there is one).
expect_input_error <- function(expr, pattern) {
  err <- tryCatch(expr, noisebench_input_error = function(e) e)
  expect_s3_class(err, "noisebench_input_error")
  expect_match(conditionMessage(err), pattern)
  expect_false(grepl("\n", conditionMessage(err)))
}

good_fwq <- function() {
  dir <- withr_tempdir(parent.frame())
  write_fwq(dir, "fwq", list(c(100, 101, 150, 100), c(200, 201, 202, 203)))
  dir
}

test_that("a good run is read with its threads, CPUs and hosts", {
  dir <- good_fwq()
  run <- read_run(file.path(dir, "fwq.json"))
  expect_equal(run$kernel, "fwq")
  expect_equal(run$threads[[1]]$data$ticks, c(100, 101, 150, 100))
  expect_equal(vapply(run$threads, function(t) t$cpu, 0L), c(0L, 1L))
  expect_equal(run$threads[[2]]$host, "synth")
  long <- run_long(run)
  expect_equal(long[unit == 1]$ticks, c(200, 201, 202, 203))
})

test_that("ticks beyond 2^31 are read as exact numbers", {
  dir <- withr_tempdir()
  ticks <- 27364143217944 + c(0, 259613, 519226)
  write_ftq(dir, "ftq", list(c(10, 11, 12)), 10000)
  write_column(file.path(dir, "ftq_0_times.dat"), ticks)
  expect_equal(read_run(file.path(dir, "ftq.json"))$threads[[1]]$data$tick, ticks)
})

test_that("FTQ counts are read as they are, whole, fractional or past 2^31", {
  dir <- withr_tempdir()
  for (counts in list(c(10, 11, 12), c(10, 11.5, 12), c(10, 3e9, 12))) {
    write_ftq(dir, "ftq", list(counts), 10000)
    # as the kernel writes them (fwrite would write 3e+09)
    writeLines(format(counts, scientific = FALSE, trim = TRUE, drop0trailing = TRUE),
      file.path(dir, "ftq_0_counts.dat"))
    expect_identical(as.numeric(read_run(file.path(dir, "ftq.json"))$threads[[1]]$data$count),
      counts)
  }
  # small whole counts take half the memory
  write_ftq(dir, "ftq", list(c(10, 11, 12)), 10000)
  expect_type(read_run(file.path(dir, "ftq.json"))$threads[[1]]$data$count, "integer")
})

test_that("a truncated file is named with its last line", {
  dir <- good_fwq()
  f <- file.path(dir, "fwq_0_times.dat")
  writeBin(charToRaw("100\n101\n15"), f)
  expect_input_error(read_run(file.path(dir, "fwq.json")), "fwq_0_times.dat:3: cut short")
})

test_that("samples read when used are checked as they are read, their files' ends at once", {
  dir <- good_fwq()
  path <- file.path(dir, "fwq.json")
  run <- read_run(path, samples = "when_used")
  # not read yet: what the file holds when first used is what is read
  writeLines(c("300", "301", "302", "303"), file.path(dir, "fwq_1_times.dat"))
  expect_equal(run$threads[[2]]$data$ticks, 300:303)
  expect_equal(run$threads[[2]]$table$value, 300:303)
  writeLines(c("100", "101"), file.path(dir, "fwq_0_times.dat"))
  expect_input_error(run$threads[[1]]$data, "fwq_0_times.dat: 2 lines, the JSON says 4")
  # a file cut short, or not there, is known without reading it
  writeBin(charToRaw("100\n101\n15"), file.path(dir, "fwq_0_times.dat"))
  expect_input_error(read_run(path, samples = "when_used"), "fwq_0_times.dat: cut short")
  unlink(file.path(dir, "fwq_0_times.dat"))
  expect_input_error(read_results(dir, samples = "when_used"), "fwq_0_times.dat: missing")
})

test_that("a file shorter than its JSON says is truncated", {
  dir <- good_fwq()
  writeLines(c("100", "101"), file.path(dir, "fwq_1_times.dat"))
  expect_input_error(read_run(file.path(dir, "fwq.json")),
    "fwq_1_times.dat: 2 lines, the JSON says 4 \\(truncated\\?\\)")
})

test_that("an empty file is named", {
  dir <- good_fwq()
  file.create(file.path(dir, "fwq_0_times.dat"))
  expect_input_error(read_run(file.path(dir, "fwq.json")), "fwq_0_times.dat: empty, the JSON says 4")
})

test_that("a word among the numbers is named with its line", {
  dir <- good_fwq()
  writeLines(c("100", "101", "abc", "100"), file.path(dir, "fwq_0_times.dat"))
  expect_input_error(read_run(file.path(dir, "fwq.json")), "fwq_0_times.dat:3: 'abc' is not a number")
})

test_that("a line with fields missing is named", {
  dir <- withr_tempdir()
  write_selfish(dir, "selfish", list(data.table(start_ns = c(1, 2, 3), length_ns = c(5, 6, 7))), 1)
  writeLines(c("1 5", "2", "3 7"), file.path(dir, "selfish_0_detours.dat"))
  expect_input_error(read_run(file.path(dir, "selfish.json")),
    "selfish_0_detours.dat:2: 1 fields, expected 2")
})

test_that("FTQ counts and times of different lengths do not pass", {
  dir <- withr_tempdir()
  write_ftq(dir, "ftq", list(rep(1000, 10)), 10000)
  write_column(file.path(dir, "ftq_0_counts.dat"), rep(1000, 9))
  expect_input_error(read_run(file.path(dir, "ftq.json")), "ftq_0_counts.dat: 9 lines, the JSON says 10")
})

test_that("a data file the JSON lists but is not there is named", {
  dir <- good_fwq()
  unlink(file.path(dir, "fwq_1_times.dat"))
  expect_input_error(read_run(file.path(dir, "fwq.json")), "fwq_1_times.dat: missing")
})

test_that("a broken JSON file is named", {
  dir <- good_fwq()
  writeLines('{"kernel": "fwq", "ranks": [', file.path(dir, "fwq.json"))
  expect_input_error(read_results(dir), "fwq.json: not valid JSON")
  file.create(file.path(dir, "fwq.json"))
  expect_input_error(read_results(dir), "fwq.json: empty JSON file")
})

test_that("a directory without runs is an error", {
  expect_input_error(read_results(withr_tempdir()), "no kernel runs")
  expect_input_error(read_results(file.path(tempdir(), "no-such-dir")), "no such directory")
})

test_that("runs are named by their path under the results directory", {
  dir <- good_fwq()
  dir.create(file.path(dir, "sweep", "000001"), recursive = TRUE)
  write_fwq(file.path(dir, "sweep", "000001"), "fwq", list(c(1, 2)))
  expect_setequal(names(read_results(paste0(dir, "/"))$runs), c("fwq", "sweep/000001/fwq"))
})

test_that("a JSON file that is not a run, such as a build tree's kernel catalogue, is left out", {
  dir <- good_fwq()
  dir.create(file.path(dir, "build"))
  writeLines('{"kernels": {"fwq": {}}, "cause_classes": []}', file.path(dir, "build", "k.json"))
  expect_named(read_results(dir)$runs, "fwq")
})

test_that("a run described in node files is read as if its JSON held the ranks", {
  dir <- withr_tempdir()
  write_fwq(dir, "fwq", list(c(100, 101), c(200, 201), c(300, 301)),
    hosts = c("a", "a", "b"))
  inline <- read_run(file.path(dir, "fwq.json"))
  meta <- jsonlite::fromJSON(file.path(dir, "fwq.json"), simplifyVector = FALSE)
  write_json_run(dir, "fwq_node0", list(node = 0, host = "a", ranks = meta$ranks[1:2]))
  write_json_run(dir, "fwq_node1", list(node = 1, host = "b", ranks = meta$ranks[3]))
  meta$ranks <- NULL
  meta$node_files <- list("fwq_node0.json", "fwq_node1.json")
  meta$machines <- lapply(c("a", "b"), function(h) modifyList(meta$machine, list(hostname = h)))
  write_json_run(dir, "fwq", meta)
  runs <- read_results(dir)$runs
  expect_named(runs, "fwq")
  expect_equal(runs$fwq$meta$ranks, inline$meta$ranks)
  expect_equal(vapply(runs$fwq$threads, function(t) t$host, ""), c("a", "a", "b"))
  expect_equal(runs$fwq$threads[[3]]$data$ticks, c(300, 301))
  # a report of host b reads b's node file only
  unlink(file.path(dir, "fwq_node0.json"))
  b <- read_results(dir, hosts = "^b$")$runs$fwq
  expect_equal(vapply(b$threads, function(t) t$unit, 0L), 2L)
  expect_equal(vapply(b$meta$machines, function(m) m$hostname, ""), "b")
  expect_input_error(read_results(dir), "fwq_node0\\.json: missing")
  expect_input_error(read_results(dir, hosts = "^c"), "no rank ran on a host matching '\\^c'")
})

test_that("a run's ranks tables are read as one table, a row a rank, bad ones named", {
  dir <- withr_tempdir()
  write_fwq(dir, "fwq", list(c(100, 101), c(200, 201), c(300, 301)),
    hosts = c("a", "a", "b"))
  meta <- jsonlite::fromJSON(file.path(dir, "fwq.json"), simplifyVector = FALSE)
  # rank, host and cpu first, as the kernels write an entry
  meta$ranks <- lapply(meta$ranks, function(r) {
    c(r[c("rank", "host", "cpu")], r[setdiff(names(r), c("rank", "host", "cpu"))])
  })
  data.table::fwrite(ranks_table_rows(meta$ranks[1:2]), file.path(dir, "fwq_node0_ranks.csv"))
  data.table::fwrite(ranks_table_rows(meta$ranks[3]), file.path(dir, "fwq_node1_ranks.csv"))
  meta$ranks_in_run <- 3
  meta$ranks_files <- list("fwq_node0_ranks.csv", "fwq_node1_ranks.csv")
  meta$machines <- lapply(c("a", "b"), function(h) modifyList(meta$machine, list(hostname = h)))
  json <- file.path(dir, "fwq.json")
  write_json_run(dir, "fwq", meta)
  d <- read_ranks_table(json)
  expect_equal(d$rank, 0:2)
  expect_equal(d$host, c("a", "a", "b"))
  expect_equal(d$stats.min, vapply(meta$ranks, function(r) r$stats$min, 0))
  expect_equal(d$stretches.n.1, vapply(meta$ranks, function(r) r$stretches$n[[1]], 0))
  # a report of host b reads b's table only
  expect_equal(read_ranks_table(json, hosts = "^b$")$rank, 2L)
  lines <- readLines(file.path(dir, "fwq_node1_ranks.csv"))
  writeLines(lines[1], file.path(dir, "fwq_node1_ranks.csv"))
  expect_input_error(read_ranks_table(json), "fwq\\.json: its ranks tables hold 2 ranks, the run had 3")
  writeLines(sub("^rank", "unit", lines), file.path(dir, "fwq_node1_ranks.csv"))
  expect_input_error(read_ranks_table(json), "fwq_node1_ranks\\.csv:1: not a ranks table")
  unlink(file.path(dir, "fwq_node1_ranks.csv"))
  expect_input_error(read_ranks_table(json), "fwq_node1_ranks\\.csv: missing")
})

test_that("ranks' data in ranges of their node's data files read as files of their own", {
  dir <- withr_tempdir()
  write_ftq(dir, "ftq", list(c(1000, 990, 1000), c(995, 1000, 980)), 10000)
  own <- read_run(file.path(dir, "ftq.json"))
  meta <- jsonlite::fromJSON(file.path(dir, "ftq.json"), simplifyVector = FALSE)
  # the kernels' layout (kernels.json's node_files): each kind's files one
  # after the other, by rank, each rank's [offset, bytes] in file_ranges
  for (kind in c("counts", "times")) {
    parts <- lapply(0:1, function(t) {
      readBin(file.path(dir, sprintf("ftq_%d_%s.dat", t, kind)), "raw", 1e6)
    })
    writeBin(do.call(c, parts), file.path(dir, sprintf("ftq_node0_%s.dat", kind)))
    unlink(file.path(dir, sprintf("ftq_%d_%s.dat", 0:1, kind)))
    meta$ranks[[1]][[paste0("range_", kind)]] <- list(0, length(parts[[1]]))
    meta$ranks[[2]][[paste0("range_", kind)]] <- list(length(parts[[1]]), length(parts[[2]]))
  }
  for (t in 1:2) {
    u <- meta$ranks[[t]]
    meta$ranks[[t]]$files <- list("ftq_node0_counts.dat", "ftq_node0_times.dat")
    meta$ranks[[t]]$file_ranges <- list(u$range_counts, u$range_times)
    meta$ranks[[t]]$range_counts <- meta$ranks[[t]]$range_times <- NULL
  }
  write_json_run(dir, "ftq", meta)
  node <- read_run(file.path(dir, "ftq.json"))
  for (t in 1:2) expect_equal(node$threads[[t]]$data, own$threads[[t]]$data)
  expect_equal(node$threads[[2]]$data$count, c(995, 1000, 980))
  lazy <- read_run(file.path(dir, "ftq.json"), samples = "when_used")
  expect_equal(lazy$threads[[2]]$data$count, c(995, 1000, 980))

  # a range cut short, or a file shorter than its ranges, is named with the range
  bytes <- meta$ranks[[2]]$file_ranges[[1]]
  meta$ranks[[2]]$file_ranges[[1]] <- list(bytes[[1]], bytes[[2]] - 1)
  write_json_run(dir, "ftq", meta)
  expect_input_error(read_run(file.path(dir, "ftq.json"), samples = "when_used"),
    sprintf("ftq_node0_counts.dat \\(bytes %d-%d\\): cut short", bytes[[1]],
      bytes[[1]] + bytes[[2]] - 1))
  meta$ranks[[2]]$file_ranges[[1]] <- bytes
  write_json_run(dir, "ftq", meta)
  counts <- file.path(dir, "ftq_node0_counts.dat")
  writeBin(readBin(counts, "raw", 1e6)[seq_len(file.size(counts) - 2)], counts)
  expect_input_error(read_run(file.path(dir, "ftq.json")),
    "ftq_node0_counts.dat: .* bytes, but a rank's data end at byte .* \\(truncated\\?\\)")
})

test_that("a report of some hosts holds their ranks only, in a directory of its own", {
  dir <- withr_tempdir()
  write_fwq(dir, "fwq", list(c(100, 101), c(200, 201), c(300, 301)),
    hosts = c("a", "a", "b"))
  run <- read_results(dir, hosts = "a")$runs$fwq
  expect_equal(vapply(run$threads, function(t) t$host, ""), c("a", "a"))
  page <- write_report(dir, hosts = "^a$", pdf = FALSE)
  expect_equal(normalizePath(dirname(page)), normalizePath(file.path(dir, "report-_a_")))
  expect_equal(unique(fread(file.path(dir, "report-_a_", "summary.csv"))$host), "a")
  expect_false(dir.exists(file.path(dir, "report")))
})

test_that("a report of some hosts counts their iterations and losses, not the run's", {
  dir <- withr_tempdir()
  ns <- list(c(1000500, 1002500, 1000200), c(1001000, 1003000, 5000000),
    c(1000100, 1000900, 1007300))
  write_psnap(dir, "psnap", ns)
  meta <- jsonlite::fromJSON(file.path(dir, "psnap.json"), simplifyVector = FALSE)
  # the run's loss histogram: each rank's own, of its own length, summed
  own <- list(c(1, 2), c(0, 0, 3), c(4, 0, 0, 5))
  for (r in 1:3) {
    meta$ranks[[r]]$host <- c("a", "b", "a")[r]
    meta$ranks[[r]]$tails$histogram <- list(samples = own[[r]], lost_ns = 10 * own[[r]])
  }
  meta$ranks_in_run <- 3
  meta$loss_histogram <- list(participants = 3, seconds = 9, edges_ns = c(100, 200, 400),
    samples = c(5, 2, 3, 5), lost_ns = c(50, 20, 30, 50))
  write_json_run(dir, "psnap", meta)
  run <- read_results(dir, hosts = "^a$")$runs$psnap
  expect_equal(run$meta$loss_histogram$samples, c(5, 2, 0, 5))
  expect_equal(run$meta$loss_histogram$lost_ns, c(50, 20, 0, 50))
  expect_equal(run$meta$loss_histogram$participants, 2)
  h <- psnap_histogram(run)
  kept <- iteration_histogram(c(ns[[1]], ns[[3]]))
  expect_equal(h$bins$n, kept$counts)
  expect_equal(h$bins$lo[1], kept$first_us)
  expect_equal(h$overflow, 0)
  # the whole run, read whole, keeps the kernel's figures
  whole <- read_results(dir)$runs$psnap
  expect_equal(unlist(whole$meta$loss_histogram$samples), c(5, 2, 3, 5))
  expect_equal(psnap_histogram(whole)$overflow, 1)
})

test_that("a results directory below one named report is read, its own report/ is not", {
  dir <- file.path(withr_tempdir(), "report", "survey")
  dir.create(dir, recursive = TRUE)
  write_fwq(dir, "fwq", list(1000 + 0:9))
  dir.create(file.path(dir, "report"))
  file.copy(file.path(dir, "fwq.json"), file.path(dir, "report", "fwq.json"))
  expect_equal(basename(find_runs(dir)), "fwq.json")
  expect_equal(dirname(find_runs(dir)), dir)
})
