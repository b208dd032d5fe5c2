#!/usr/bin/env Rscript
# The report of a survey from 2 ranks to 10^6 CPUs beside data.table::fread
# of the same files, and whether it finds the planted bad cabinets,
# chassis, nodes and cores and nothing else (goal: the report within 3x
# fread's time, memory linear in the ranks). Each size is a synthetic
# survey (survey.R) from SOURCE.json, a real FWQ run of this machine; each
# figure is timed in an R process of its own, as report.R runs, its peak
# memory its processes' proportional set sizes (in_process.R). A size whose
# report or files would not fit this machine, by the growth between the two
# sizes before it, is not run: its line gives what it would need.
#
#   Rscript benchmarks/survey_scale.R SOURCE.json [SAMPLES_PER_RANK [LARGEST_RANKS]]
#
# SAMPLES_PER_RANK 1,000 unless given: 10^6 CPUs' are then 10^9 samples,
# about 7 GB of files written in half an hour; at 10,000 they would be 70 GB.
# The report's work grows with the ranks (their summaries and stretches),
# fread's with the samples: so 64, 10,240 and 98,304 CPUs are surveyed
# again at FWQ's own run length (fwq's -n default, 10,000; 98,304 CPUs'
# 10^9 samples are 6 GB written in 7 minutes), and each size's line
# gives from how many samples a rank the report's work beyond its fixed
# cost would be within 3x fread's, at the costs a rank and a sample measured.
script <- sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))
here <- dirname(script)
.libPaths(c(file.path(here, "..", "build", "lib", "R"), .libPaths()))
suppressPackageStartupMessages(library(data.table))
source(file.path(here, "survey.R"))
use_kernel_figures(here)
source(file.path(here, "in_process.R"))

args <- commandArgs(trailingOnly = TRUE)
time_if_asked(args, list(
  fread = function(dir) {
    for (f in list.files(dir, "_times\\.dat$", full.names = TRUE)) fread(f, header = FALSE)
  },
  report = function(dir) noisebench::write_report(dir)))

if (length(args) < 1) stop("usage: survey_scale.R SOURCE.json [SAMPLES_PER_RANK [LARGEST_RANKS]]")
source_json <- args[1]
samples <- if (length(args) > 1) as.numeric(args[2]) else 1000
largest <- if (length(args) > 2) as.numeric(args[3]) else 2^20

# Whether the CPUs this runs on could meet the goal at all: the report's
# work (its own process's and the slowdown model's CPU seconds), spread on
# every CPU allowed, against 3x fread's time.
cpus <- length(parallel::mcaffinity())
cpu_bound <- function(report_cpu, fread_s) {
  least <- report_cpu / cpus
  sprintf("the report's work: %.2f CPU-s, so at least %.2f s on %d CPU%s: 3x fread (%.2f s) %s",
    report_cpu, least, cpus, if (cpus == 1) "" else "s", 3 * fread_s,
    if (least > 3 * fread_s) "cannot be met on these CPUs" else "is within their reach")
}

# From how many samples a rank the report's work beyond its fixed cost
# (beyond, s) would be within 3x fread's (fread_s), each growing as measured
# at this size: the report's by the rank, fread's by the sample.
break_even <- function(beyond, fread_s, ranks, samples) {
  per_rank <- beyond / ranks
  per_sample <- fread_s / (ranks * samples)
  sprintf(paste("beyond its fixed cost the report takes %.3f ms a rank, fread %.3f us a",
    "sample: within 3x fread from %s samples a rank"), 1e3 * per_rank, 1e6 * per_sample,
    format(signif(max(0, per_rank) / (3 * per_sample), 3), big.mark = ","))
}

# hosts x ranks per host: a laptop, nodes of 16, 64 and 128 cores; then
# whole machines of 128-CPU nodes named as HPE Cray EX names them (16 nodes
# a chassis, 128 a cabinet): 10^4, 10^5 and 10^6 CPUs, a bad chassis, and
# beyond one cabinet bad cabinets too
# FWQ's own run length, as the build's fwq says it (-n's default)
fwq_default_samples <- local({
  help <- system2(file.path(here, "..", "build", "bin", "fwq"), "--help", stdout = TRUE)
  n <- as.numeric(sub(".*default ([0-9]+).*", "\\1", grep("^ *-n ", help, value = TRUE)))
  if (length(n) != 1 || is.na(n)) stop("survey_scale.R: build/bin/fwq --help names no -n default")
  n
})
sizes <- data.table(hosts = c(1, 4, 8, 64, 80, 4, 80, 768, 768, 8192),
  per_host = c(2, 16, 64, 128, 128, 16, 128, 128, 128, 128), xnames = c(FALSE, FALSE, FALSE,
    FALSE, TRUE, FALSE, TRUE, TRUE, TRUE, TRUE), bad_cabinets = c(0, 0, 0, 0, 0, 0, 0, 1, 1, 2),
  bad_chassis = c(0, 0, 0, 0, 1, 0, 1, 1, 1, 2),
  samples = c(rep(samples, 5), rep(fwq_default_samples, 3), samples, samples))[
  hosts * per_host <= largest]
# at FWQ's own length already: each size once
sizes <- unique(sizes, by = c("hosts", "per_host", "xnames", "samples"))
cat(sprintf(paste("report of an FWQ survey (%s samples a rank unless said, from %s) beside",
  "fread of its files, each in a process of its own; planted: 3 bad cores, and of 4 hosts one",
  "bad node, of 8 or more two; of the machines named by xname bad cabinets and chassis too\n"),
  format(samples, big.mark = ","), source_json))

# What a size would need, from the growth measured between the last two
# sizes run of SAMPLES_PER_RANK: the report's peak memory and the survey's
# files (as many times more as its samples a rank, at another length).
disk_bytes <- function(dir) sum(file.size(list.files(dir, recursive = TRUE, full.names = TRUE)))
grown <- data.table(ranks = numeric(), memory = numeric(), disk = numeric())
projection <- function(ranks) {
  if (nrow(grown) < 2) return(NULL)
  last <- grown[(.N - 1):.N]
  slope <- function(y) diff(y) / diff(last$ranks)
  list(memory = last$memory[2] + slope(last$memory) * (ranks - last$ranks[2]),
    disk = last$disk[2] + slope(last$disk) * (ranks - last$ranks[2]))
}
does_not_fit <- function(ranks, length_of_run) {
  need <- projection(ranks)
  if (is.null(need)) return(NULL)
  need$disk <- need$disk * max(1, length_of_run / samples)
  memory <- proc_kib("/proc/meminfo", "MemAvailable") * 1024
  disk <- as.numeric(system2("df", c("-B1", "--output=avail", shQuote(tempdir())),
    stdout = TRUE)[2])
  if (need$memory < 0.8 * memory && need$disk < 0.8 * disk) return(NULL)
  sprintf(paste("%7d ranks: not run: the report would need about %.1f GiB at its peak and",
    "the survey %.1f GB of files (grown as between the last two sizes); this machine has %.1f",
    "GiB of memory and %.1f GB of disk free"), ranks, need$memory / 2^30, need$disk / 1e9,
    memory / 2^30, disk / 1e9)
}

key <- function(d) {
  paste(d$scope, ifelse(d$scope %in% c("node", "core"), d$host, d$location),
    ifelse(is.na(d$cpu), "", d$cpu))
}

# what a report costs whatever its ranks (R's start, ggplot2 and its
# figures, the slowdown model's simulations, the samples of the ranks it
# shows in detail or models): of each length of run, the report of its
# first size of several hosts less its fread. A report of one host draws
# no machine's figures and simulates little, and its 64 ranks' share of
# the rest is about 10 ms: from 64 ranks the model simulates as much at
# any size, and the ranks read whole are as many.
fixed <- numeric()
for (i in seq_len(nrow(sizes))) {
  s <- sizes[i]
  ranks <- s$hosts * s$per_host
  refused <- does_not_fit(ranks, s$samples)
  if (!is.null(refused)) {
    cat(refused, "\n")
    next
  }
  dir <- tempfile(sprintf("nb-survey-%d-", ranks))
  # a node is an outlier against the others: with two bad of four, each
  # one's yardstick (the other three's median and MAD) would be a third bad
  written <- system.time(write_survey(source_json, dir, s$hosts, s$per_host, s$samples,
    bad_nodes = if (s$hosts >= 8) 2 else if (s$hosts >= 4) 1 else 0, bad_cores = 3,
    xnames = s$xnames, bad_cabinets = s$bad_cabinets, bad_chassis = s$bad_chassis))[["elapsed"]]
  # the smaller sizes three times, the medians: seconds of a second move
  rounds <- if (ranks <= 512) 3 else 1
  base <- replicate(rounds, timed(script, "fread", dir))
  report <- replicate(rounds, timed(script, "report", dir))
  planted <- fread(file.path(dir, "planted.csv"))
  flagged <- fread(file.path(dir, "report", "outliers.csv"))
  levels <- if (nrow(planted)) paste(sort(unique(planted$scope)), collapse = ", ") else ""
  finding <- if (nrow(planted)) {
    sprintf("planted (%s; %s%% of time more%s) found %d of %d", levels,
      format(planted$added_percent[1]),
      if (planted$stands_out[1]) "" else ": cannot tell, survey.R's line above says why",
      sum(key(planted) %in% key(flagged)), nrow(planted))
  } else {
    "none planted"
  }
  others <- sum(!key(flagged) %in% key(planted))
  judged <- !nrow(planted) || planted$stands_out[1]
  missed <- setdiff(key(planted), key(flagged))
  f <- apply(base, 1, stats::median)
  r <- apply(report, 1, stats::median)
  # the size that measures the fixed cost is not held against it
  length_of_run <- as.character(s$samples)
  measures_fixed <- is.na(fixed[length_of_run]) && s$hosts > 1
  if (measures_fixed) fixed[length_of_run] <- r[1] - f[1]
  base_cost <- fixed[length_of_run]
  disk <- disk_bytes(dir)
  # the growth to project by: of sizes of the same samples a rank
  if (s$samples == samples) grown <- rbind(grown, list(ranks, r[2] * 2^20, disk))
  beyond <- if (is.na(base_cost) || measures_fixed) "" else {
    sprintf(", %.1f beyond the %.1f s every report of several hosts costs (goal <= 3)",
      (r[1] - base_cost) / f[1], base_cost)
  }
  cat(sprintf(paste("%7d ranks on %4d hosts, %7.1f M samples%s (%.1f GB, written in %.0f s):",
    "fread %6.2f s %5.0f MiB, report %6.2f s %5.0f MiB, ratio %5.1f%s; %.0f bytes",
    "a sample; %s, others flagged %d%s\n"),
    ranks, s$hosts, ranks * s$samples / 1e6, if (s$samples == samples) "" else
    sprintf(" (%s a rank)", format(s$samples, big.mark = ",")), disk / 1e9, written, f[1], f[2],
    r[1], r[2], r[1] / f[1], beyond, r[2] * 2^20 / (ranks * s$samples),
    finding, others, if (judged) "" else " (not judged)"))
  cat(sprintf("%30s%s\n", "", cpu_bound(r[3], f[1])))
  if (nzchar(beyond)) {
    cat(sprintf("%30s%s\n", "", break_even(r[1] - base_cost, f[1], ranks, s$samples)))
  }
  if (length(missed)) cat(sprintf("%30smissed: %s\n", "", paste(trimws(missed), collapse = "; ")))
  unlink(dir, recursive = TRUE)
}
