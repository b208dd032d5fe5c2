# When the noise came: each rank's run in 100 stretches of one width for the
# whole run, as the kernels reduce their samples (src/lib/base/stretches.h,
# the JSON's `stretches`): how many samples ended in each and their values
# summed. The heat map, the nodes' and the cores' yardsticks are drawn from
# these alone, never from the samples.

stretches_per_run <- 100

# Every rank's stretches, checked: width_s (a value a rank), n and sum (a
# list each of a vector a stretch, a value a rank in it, NA past a rank's
# last: rank_columns).
run_stretches <- function(run) {
  s <- list(width_s = rank_values(run, "stretches.width_s"),
    n = rank_columns(run, "stretches.n"), sum = rank_columns(run, "stretches.sum"))
  if (anyNA(s$width_s) || length(s$n) != length(s$sum) ||
      length(s$n) > stretches_per_run) {
    stop_input(run$path, paste("a rank's JSON entry has no stretches {width_s, n, sum}:",
      "written by a noisebench older than its analysis; run it again"))
  }
  s
}

# Noise per thread and stretch, for the heat map: lost_percent of each of
# `bins` equal stretches of the run (each `stretches_per_run / bins` of the
# kernel's, which bins must divide); selfish: the share of the stretch's
# time its detours took beyond an ordinary iteration.
# best: each thread's own best sample ("own", Sequoia's), or the run's best
# over every thread and host ("run": a node slow in every sample is then
# seen as slow). P-SNAP's best is always its calibrated ideal iteration.
# Each row keeps its stretch's samples (n) and their sum (total), from which
# stretch_percent_against gives their noise against another best.
#' @rdname noise_summary
#' @export
noise_over_time <- function(run, bins = stretches_per_run, best = c("own", "run")) {
  best <- match.arg(best)
  if (stretches_per_run %% bins != 0) {
    stop("bins must divide ", stretches_per_run, ", not ", bins, call. = FALSE)
  }
  per_bin <- stretches_per_run %/% bins
  s <- run_stretches(run)
  width <- max(s$width_s) * per_bin
  # columns built whole, stretch by stretch (each a vector of the ranks'),
  # not a table a rank bound together: 6.5 M rows at 65,536 ranks; the
  # stretches no sample ended in (past a rank's last, or inside a stall)
  # left out
  n <- as.numeric(unlist(s$n, use.names = FALSE))
  used <- which(!is.na(n) & n > 0)
  ranks <- rank_count(run)
  at <- (used - 1L) %% ranks + 1L
  rows <- setDT(list(unit = thread_values(run, "unit", 0L)[at],
    cpu = thread_values(run, "cpu", 0L)[at], host = thread_values(run, "host", "")[at],
    bin = ((used - 1L) %/% ranks) %/% per_bin,
    n = n[used], total = as.numeric(unlist(s$sum, use.names = FALSE))[used]))
  rm(n, used, at)
  if (per_bin > 1) {
    rows <- rows[, .(n = sum(n), total = sum(total)), by = .(unit, cpu, host, bin)]
  }
  rows[, time_s := (bin + 0.5) * width]
  if (records_detours(kernel_info(run$kernel))) {
    rows[, noise_percent := 100 * total / 1e9 / width]
  } else {
    bests <- thread_bests(run, best)
    units <- vapply(run$threads, function(t) as.numeric(t$unit), numeric(1))
    rows[, noise_percent := lost_percent(run$kernel, total, n, bests[match(unit, units)])]
  }
  setcolorder(rows, c("bin", "noise_percent", "unit", "cpu", "host", "n", "total"))[]
}

# The noise_percent of noise_over_time's stretches against another best:
# the heat map's (each thread's own best) from the nodes' and cores'
# yardstick (the run's), a vector beside the table rather than a copy of
# it (6.5 M rows at 65,536 ranks). Selfish's do not depend on a best.
stretch_percent_against <- function(stretches, run, best = c("own", "run")) {
  if (records_detours(kernel_info(run$kernel))) return(stretches$noise_percent)
  bests <- thread_bests(run, match.arg(best))
  units <- vapply(run$threads, function(t) as.numeric(t$unit), numeric(1))
  lost_percent(run$kernel, stretches$total, stretches$n, bests[match(stretches$unit, units)])
}

# Each thread's best value in its own unit (noise_over_time).
thread_bests <- function(run, best) {
  own <- run_moments(run)$best
  info <- kernel_info(run$kernel)
  if (!is.null(info$ideal)) {
    ideal <- rank_values(run, info$ideal) * 1e3
    return(ifelse(is.na(ideal), own, ideal))
  }
  if (best == "own") return(own)
  if (falling(info)) return(rep(max(own), length(own)))
  # FWQ samples are ticks of each host's own clock: the fastest in ns
  tpn <- vapply(run$threads, function(t) t$ticks_per_ns, numeric(1))
  min(own / tpn) * tpn
}

