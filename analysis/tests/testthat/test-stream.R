# Streamed runs (--stream): read from their checkpoints as the kernels write
# them, tails from the histogram, a run killed outright read to its last
# checkpoint.

# A FWQ (or P-SNAP: `kernel`) stream rank at 1 tick a ns: `losses` (ticks)
# tabulated in 1% buckets as stream.c does, one event of the longest with
# its samples, and the per-second lines (the last one cut short, as a kill
# leaves it). The event's samples in its byte range of the rank's events
# file, after those of an event since dropped; or (events = "files", as
# older soaks have them) in a file of its own.
write_stream_rank <- function(dir, prefix, rank, losses, reference = 10000, kernel = "fwq",
                              host = "synth", events = c("ranges", "files")) {
  g <- 1.01
  bucket <- ifelse(losses < 1, 0, 1 + floor(log(losses) / log(g)))
  counts <- table(bucket)
  top <- which.max(losses)
  around <- max(1, top - 5):min(length(losses), top + 5)
  lines <- sprintf("%.0f %.0f\n", reference + losses[around],
    1e6 + cumsum(reference + losses)[around])
  range <- if (match.arg(events) == "ranges") {
    event_file <- sprintf("%s_%d_events_0.dat", prefix, rank)
    dropped <- "10001 1000001\n10002 1000002\n"
    cat(dropped, lines, file = file.path(dir, event_file), sep = "")
    list(offset = nchar(dropped), bytes = sum(nchar(lines)))
  } else {
    event_file <- sprintf("%s_%d_event_%d.dat", prefix, rank, top - 1)
    cat(lines, file = file.path(dir, event_file), sep = "")
    NULL
  }
  seconds_file <- sprintf("%s_%d_seconds.dat", prefix, rank)
  writeLines(c("# second samples min max mean lost_percent", "0 100 10000 20000 10100.5 1.25",
    "1 100 10000 10500 10010.0 0.5"), file.path(dir, seconds_file))
  cat("2 50 100", file = file.path(dir, seconds_file), append = TRUE) # cut short
  info <- list(stream_of = kernel, complete = FALSE, rank = rank, cpu = rank, host = host,
    work = "multiiter", work_loops_per_sample = 4096, ticks_per_ns = 1, start_tick = 1e6,
    unit = "ticks", reference = reference, samples = length(losses), lost_samples = 0,
    seconds = 2.5, lost_percent = 1, checkpoints = 3, checkpoint_ms_max = 2,
    memory_bytes = 2^20, seconds_file = seconds_file,
    histogram = list(growth = g, buckets = lapply(names(counts), function(b) {
      list(as.numeric(b), as.numeric(counts[[b]]))
    })),
    events = list(c(list(index = top - 1, tick = 1e6 + sum(reference + losses[1:top]),
      value = reference + losses[top], loss = losses[top], file = event_file,
      first = around[1] - 1, samples = length(around)), range)))
  writeLines(jsonlite::toJSON(info, auto_unbox = TRUE, digits = NA),
    file.path(dir, sprintf("%s_%d_stream.json", prefix, rank)))
}

test_that("a stream killed outright is read to its last checkpoint", {
  dir <- withr_tempdir()
  set.seed(5)
  losses <- c(rep(0, 9000), round(stats::rexp(990, 1 / 500)), rep(200000, 10))
  write_stream_rank(dir, "soak", 0, losses)
  data <- read_results(dir)
  expect_length(data$runs, 0)
  expect_named(data$streams, "soak")
  s <- data$streams$soak
  expect_false(s$complete)
  # the line cut short is not read
  expect_equal(stream_detail(s$ranks[[1]])$seconds$second, c(0, 1))
  tails <- stream_tail_table(data$streams)
  # type 1 percentiles of the losses (us), each within its 1% bucket
  exact <- sort(losses)[ceiling(c(0.5, 0.99, 0.999, 0.9999) * length(losses))] / 1e3
  got <- unlist(tails[, .(p50_us, p99_us, p99_9_us, p99_99_us)])
  expect_true(all(got >= exact & got <= pmax(exact * 1.0101, 1e-3)))
  expect_equal(tails$max_us, 200)
  hours <- 2.5 / 3600
  # the 10 of 200 us; the exponential ones stay under 10 us
  expect_equal(tails$above_10us_per_hour, 10 / hours)
  expect_equal(tails$above_100us_per_hour, 10 / hours)
  expect_equal(tails$above_1000us_per_hour, 0)
})

test_that("a report of some hosts keeps only their ranks", {
  dir <- withr_tempdir()
  write_stream_rank(dir, "soak", 0, c(rep(0, 100), 5000), host = "nid001")
  write_stream_rank(dir, "soak", 1, c(rep(0, 100), 7000), host = "nid002")
  s <- read_results(dir, hosts = "^nid001$")$streams$soak
  expect_equal(vapply(s$ranks, function(r) r$info$rank, 0), 0)
  expect_equal(nrow(stream_detail(s$ranks[[1]])$seconds), 2)
})

test_that("a stream's per-second and event files are read for the ranks shown only", {
  dir <- withr_tempdir()
  # ranks 0-9 lose 1% to 10%: the figures show the 7 noisiest and the quietest
  for (rank in 0:9) {
    write_stream_rank(dir, "soak", rank, c(rep(0, 100), 5000 + rank))
    path <- file.path(dir, sprintf("soak_%d_stream.json", rank))
    info <- jsonlite::read_json(path)
    info$lost_percent <- rank + 1
    writeLines(jsonlite::toJSON(info, auto_unbox = TRUE, digits = NA), path)
  }
  # ranks 1 and 2 are neither: their files are never opened
  for (rank in 1:2) {
    unlink(Sys.glob(file.path(dir, sprintf("soak_%d_[se][ev]*.dat", rank))))
  }
  expect_length(Sys.glob(file.path(dir, "soak_[12]_*.dat")), 0)
  write_report(dir, pdf = FALSE)
  expect_true(file.exists(file.path(dir, "report", "soak-stream-events-9.png")))
  expect_true(file.exists(file.path(dir, "report", "soak-stream-events-0.png")))
  expect_false(file.exists(file.path(dir, "report", "soak-stream-events-1.png")))
  expect_equal(nrow(fread(file.path(dir, "report", "streams.csv"))), 10)
  # a rank shown whose per-second file is missing is an error that names it
  unlink(file.path(dir, "soak_9_seconds.dat"))
  expect_error(write_report(dir, pdf = FALSE), "soak_9_seconds.dat: missing",
    class = "noisebench_input_error")
})

test_that("a P-SNAP stream's losses are its iterations' ticks beyond the best, as FWQ's", {
  dir <- withr_tempdir()
  losses <- c(rep(0, 900), rep(3000, 100))
  write_stream_rank(dir, "fwq", 0, losses)
  write_stream_rank(dir, "psnap", 0, losses, kernel = "psnap")
  data <- read_results(dir)
  tails <- stream_tail_table(data$streams)
  expect_equal(tails[run == "psnap", .(p99_us, max_us)], tails[run == "fwq", .(p99_us, max_us)])
  expect_equal(tails[run == "psnap"]$max_us, 3)
  expect_match(stream_label("psnap", data$streams$psnap)$label, "^P-SNAP multiiter streamed")
})

test_that("the report of streamed runs has their table, tails and figures", {
  dir <- withr_tempdir()
  write_stream_rank(dir, "soak", 0, c(rep(0, 100), 5000))
  write_stream_rank(dir, "soak", 1, c(rep(0, 100), 7000))
  page <- paste(readLines(write_report(dir, pdf = FALSE)), collapse = "\n")
  expect_match(page, "<h2>Streamed runs</h2>")
  expect_match(page, "FWQ multiiter streamed, 2 CPUs on synth \\(to its last checkpoint\\)")
  streams <- fread(file.path(dir, "report", "streams.csv"))
  expect_equal(streams$thread, 0:1)
  expect_true(file.exists(file.path(dir, "report", "soak-stream-series.png")))
  expect_true(file.exists(file.path(dir, "report", "soak-stream-events-1.png")))
  tails <- fread(file.path(dir, "report", "tails.csv"))
  expect_equal(tails$max_us, c(5, 7))
})

test_that("a streamed run beside the others is in the same report", {
  dir <- withr_tempdir()
  write_fwq(dir, "fwq", list(c(rep(1000, 999), 5000)))
  write_stream_rank(dir, "soak", 0, c(rep(0, 100), 5000))
  page <- paste(readLines(write_report(dir, pdf = FALSE)), collapse = "\n")
  expect_match(page, "<h2>Streamed runs</h2>")
  tails <- fread(file.path(dir, "report", "tails.csv"))
  expect_setequal(tails$run, c("fwq", "soak"))
  expect_true(file.exists(file.path(dir, "report", "soak-stream-series.png")))
})

test_that("a long stream's figures keep each step's worst and each slice's extremes", {
  dir <- withr_tempdir()
  # 3 hours of seconds, one of them losing 40%; an event of 10,000 samples
  # with one loss of 9 us
  losses <- c(rep(0, 5000), 9000, rep(0, 4999))
  write_stream_rank(dir, "soak", 0, losses)
  seconds <- data.table(second = 0:10799, samples = 100, min = 10000, max = 10100,
    mean = 10010, lost_percent = 0.5)
  seconds[second == 7777, `:=`(max = 30000, lost_percent = 40)]
  fwrite(seconds, file.path(dir, "soak_0_seconds.dat"), sep = " ", col.names = FALSE)
  rank <- stream_detail(read_results(dir)$streams$soak$ranks[[1]])
  expect_equal(nrow(rank$seconds), 10800)
  expect_equal(nrow(rank$events[[1]]), 11)
  # the event's samples: all of them around the longest loss, as written
  rank$events[[1]] <- data.table(value = 10000 + losses, tick = 1e6 + cumsum(10000 + losses),
    index = seq_along(losses) - 1)
  rank$event_info[[1]]$tick <- 1e6 + sum(10000 + losses[1:5001])
  series <- plot_stream_series(list(kernel = "fwq", ranks = list(rank)), "x")$data
  # steps of 10 s: 1,080 of each figure, the worst second kept
  expect_equal(nrow(series), 2 * 1080)
  expect_equal(max(series[figure == "time lost (%)"]$value), 40)
  expect_equal(max(series[figure == "longest loss (us)"]$value), 20)
  events <- plot_stream_events(rank, "fwq", "y")$data
  expect_lte(nrow(events), stream_points_max)
  expect_equal(max(events$loss_us), 9)
  expect_equal(events[which.max(loss_us)]$ms, 0)
})

test_that("an event's samples are its byte range of the rank's events file, or its own file", {
  losses <- c(rep(0, 50), 700, rep(0, 49))
  for (events in c("ranges", "files")) {
    dir <- withr_tempdir()
    write_stream_rank(dir, "soak", 0, losses, events = events)
    rank <- stream_detail(read_results(dir)$streams$soak$ranks[[1]])
    # the samples 45-55 around the loss at 50, not the dropped event's before
    expect_equal(rank$events[[1]]$value, 10000 + losses[46:56])
    expect_equal(rank$events[[1]]$index, 45:55)
  }
  # a range past the file's end is named with the range
  dir <- withr_tempdir()
  write_stream_rank(dir, "soak", 0, losses)
  events_file <- file.path(dir, "soak_0_events_0.dat")
  writeBin(readBin(events_file, "raw", 40), events_file)
  expect_error(stream_detail(read_results(dir)$streams$soak$ranks[[1]]),
    "soak_0_events_0.dat: 40 bytes, but a rank's data end at byte",
    class = "noisebench_input_error")
})

test_that("a checkpoint whose histogram is not pairs of numbers is an error that names it", {
  dir <- withr_tempdir()
  write_stream_rank(dir, "soak", 0, c(rep(0, 100), 5000))
  path <- file.path(dir, "soak_0_stream.json")
  info <- jsonlite::read_json(path)
  info$histogram$buckets <- list(list(1, 2), list(3))
  writeLines(jsonlite::toJSON(info, auto_unbox = TRUE, digits = NA), path)
  expect_error(read_results(dir), "soak_0_stream.json: histogram buckets are not",
    class = "noisebench_input_error")
})

test_that("a second's line carries the system's share; a line without it is an older file's", {
  path <- file.path(withr_tempdir(), "s_0_seconds.dat")
  writeLines(c("# second samples min max mean lost_percent stolen_percent",
    "0 100 10 50 12.5 4.5 2.25", "1 3 10 11 10.3 0.1 nan"), path)
  d <- read_stream_seconds(path)
  expect_equal(d$stolen_percent, c(2.25, NaN))
  expect_equal(d$lost_percent, c(4.5, 0.1))
  writeLines(c("0 100 10 50 12.5 4.5"), path)
  expect_true(is.na(read_stream_seconds(path)$stolen_percent))
  writeLines(c("0 100 10 nan 12.5 4.5 1"), path)
  expect_error(read_stream_seconds(path), "not the seven numbers a line")
})
