#!/usr/bin/env Rscript
# The report of soaks (--stream) from 8 to 2,048 ranks, an hour or a day
# long, beside data.table::fread of every rank's per-second file (what a
# report that read them all would read at least). Goal: the report's time
# and memory grow with the ranks by their checkpoints only (a few KB each),
# and not with the length: it reads the per-second and event files of the
# 8 ranks its figures show.
#
#   Rscript benchmarks/stream_report.R SOURCE_DIR
#
# SOURCE_DIR holds a real stream run of this machine (`fwq -t 0 --stream
# --seconds 3 -o SOURCE_DIR/soak`); each synthetic rank is its rank 0, with
# its own share of time lost (so that the ranks shown differ from rank 0)
# and the per-second lines of the length asked. The ranks' per-second and
# event files are hard links to one copy: the disk holds one rank's, and the
# page cache serves both readers alike. Each figure is timed in an R
# process of its own, its peak memory from the kernel (VmHWM).
script <- sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))
here <- dirname(script)
.libPaths(c(file.path(here, "..", "build", "lib", "R"), .libPaths()))
suppressPackageStartupMessages(library(data.table))
source(file.path(here, "in_process.R"))

args <- commandArgs(trailingOnly = TRUE)
time_if_asked(args, list(
  fread = function(dir) {
    for (f in list.files(dir, "_seconds\\.dat$", full.names = TRUE)) fread(f, skip = 1)
  },
  report = function(dir) noisebench::write_report(dir)))

if (length(args) != 1) stop("usage: stream_report.R SOURCE_DIR")
source_dir <- args[1]

# A soak of `ranks` ranks of `length_s` seconds each in dir, from the
# source's rank 0
write_soak <- function(dir, ranks, length_s) {
  dir.create(dir)
  info <- jsonlite::read_json(file.path(source_dir, "soak_0_stream.json"))
  lines <- readLines(file.path(source_dir, info$seconds_file))
  first <- strsplit(lines[!startsWith(lines, "#")][1], " ")[[1]]
  seconds <- file.path(dir, "seconds.dat")
  fwrite(data.table(second = seq_len(length_s) - 1, rest = paste(first[-1], collapse = " ")),
    seconds, sep = " ", col.names = FALSE, quote = FALSE)
  events <- Filter(function(e) !is.null(e$file), info$events)
  # the events' samples: one file a rank (older soaks: one an event)
  event_files <- unique(vapply(events, `[[`, "", "file"))
  originals <- file.path(dir, paste0("source_", event_files))
  file.copy(file.path(source_dir, event_files), originals)
  rank_file <- function(file, rank) sub("^soak_0_", sprintf("soak_%d_", rank), file)
  set.seed(1)
  for (rank in seq_len(ranks) - 1) {
    r <- info
    r[c("rank", "cpu", "host")] <- list(rank, rank %% 128, sprintf("nb%05d", rank %/% 128))
    r$lost_percent <- stats::runif(1, 0.5, 5)
    r$seconds_file <- sprintf("soak_%d_seconds.dat", rank)
    file.link(seconds, file.path(dir, r$seconds_file))
    file.link(originals, file.path(dir, rank_file(event_files, rank)))
    r$events <- lapply(events, function(e) {
      e$file <- rank_file(e$file, rank)
      e
    })
    writeLines(jsonlite::toJSON(r, auto_unbox = TRUE, digits = NA),
      file.path(dir, sprintf("soak_%d_stream.json", rank)))
  }
  unlink(c(seconds, originals))
}

sizes <- data.table(ranks = c(8, 64, 64, 512, 2048), hours = c(1, 1, 24, 1, 1))
cat(sprintf("report of FWQ soaks (from %s) beside fread of every rank's per-second file,",
  source_dir), "each in a process of its own\n")
for (i in seq_len(nrow(sizes))) {
  s <- sizes[i]
  dir <- tempfile(sprintf("nb-soak-%d-", s$ranks))
  write_soak(dir, s$ranks, s$hours * 3600)
  f <- timed(script, "fread", dir)
  r <- timed(script, "report", dir)
  unlink(dir, recursive = TRUE)
  sizes[i, c("fread_s", "fread_mib", "report_s", "report_mib") := as.list(c(f[1:2], r[1:2]))]
  # what a rank adds to the first size's report (its 8 ranks' figures), and
  # what a day adds to an hour of the same ranks (those 8 ranks' lines)
  hour <- sizes[ranks == s$ranks & hours == 1]
  extra <- if (s$hours > 1 && nrow(hour)) {
    sprintf(", %+.2f s and %+.0f MiB beside an hour", r[1] - hour$report_s, r[2] - hour$report_mib)
  } else if (i > 1) {
    sprintf(", %.1f ms and %.0f KiB a rank more than %d ranks'", 1e3 *
      (r[1] - sizes$report_s[1]) / (s$ranks - sizes$ranks[1]),
      1024 * (r[2] - sizes$report_mib[1]) / (s$ranks - sizes$ranks[1]), sizes$ranks[1])
  } else ""
  cat(sprintf(paste("%5d ranks x %2d h: fread of the per-second files %6.2f s %5.0f MiB,",
    "report %6.2f s %5.0f MiB%s\n"), s$ranks, s$hours, f[1], f[2], r[1], r[2], extra))
}
