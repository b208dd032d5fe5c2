# When the noise came: each rank's run in 100 stretches of one width for the
# whole run, as the kernels reduce their samples (src/lib/base/stretches.h,
# the JSON's `stretches`): how many samples ended in each and their values
# summed. The heat map, the nodes' and the cores' yardsticks are drawn from
# these alone, never from the samples.

stretches_per_run <- 100

# Every rank's stretches, checked (of the ranks at positions `rows`, or
# all): width_s (a value a rank), n and sum (a list each of a vector a
# stretch, a value a rank in it, NA past a rank's last: rank_columns).
run_stretches <- function(run, rows = NULL) {
  arrays <- rank_arrays(run, c("stretches.n", "stretches.sum"),
    rows %||% seq_len(rank_count(run)))
  s <- list(width_s = rank_values(run, "stretches.width_s"), n = arrays[[1]], sum = arrays[[2]])
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
# Each row keeps its stretch's samples (n) and their sum (total).
#' @rdname noise_summary
#' @export
noise_over_time <- function(run, bins = stretches_per_run, best = c("own", "run")) {
  best <- match.arg(best)
  if (stretches_per_run %% bins != 0) {
    stop("bins must divide ", stretches_per_run, ", not ", bins, call. = FALSE)
  }
  rows <- stretch_rows(run, seq_len(rank_count(run)), stretch_context(run, best),
    stretches_per_run %/% bins)
  rows[, at := NULL][]
}

# The middle of stretch `bin` (from 0) of `width_s` seconds: where the heat
# map draws it
stretch_middle_s <- function(bin, width_s) (bin + 0.5) * width_s

# What stretch_rows needs of the whole run, found once: each rank's best,
# unit, CPU and host, and the stretches' width.
stretch_context <- function(run, best) {
  # selfish's noise is its detours' time, against no best
  list(best = if (!records_detours(kernel_info(run$kernel))) thread_bests(run, best),
    unit = thread_values(run, "unit", 0L), cpu = thread_values(run, "cpu", 0L),
    host = thread_values(run, "host", ""), width_s = max(run_stretches(run, integer())$width_s))
}

# noise_over_time's rows of the ranks at positions `rows`, with at (a row's
# rank's position). The columns built whole, stretch by stretch (each a
# vector of the ranks'), not a table a rank bound together; the stretches
# no sample ended in (past a rank's last, or inside a stall) left out.
stretch_rows <- function(run, rows, context, per_bin = 1L) {
  s <- run_stretches(run, rows)
  width <- context$width_s * per_bin
  n <- as.numeric(unlist(s$n, use.names = FALSE))
  used <- which(!is.na(n) & n > 0)
  ranks <- length(rows)
  at <- rows[(used - 1L) %% ranks + 1L]
  out <- setDT(list(unit = context$unit[at], cpu = context$cpu[at], host = context$host[at],
    bin = ((used - 1L) %/% ranks) %/% per_bin,
    n = n[used], total = as.numeric(unlist(s$sum, use.names = FALSE))[used], at = at))
  rm(n, used)
  if (per_bin > 1) {
    out <- out[, .(n = sum(n), total = sum(total)), by = .(unit, cpu, host, bin, at)]
  }
  out[, time_s := stretch_middle_s(bin, width)]
  if (records_detours(kernel_info(run$kernel))) {
    out[, noise_percent := 100 * total / 1e9 / width]
  } else {
    out[, noise_percent := lost_percent(run$kernel, total, n, context$best[at])]
  }
  setcolorder(out, c("bin", "noise_percent", "unit", "cpu", "host", "n", "total"))[]
}

# A host's stretches are kept, for the yardsticks of the levels above it,
# as at most this many values: the whole of a node of up to 5 CPUs, and of
# a node of 288 CPUs' 28,800 one of each 56 in their order (each standing
# for them: a median of 10^6 CPUs' stretches found to within about 1/500
# of their ranks, far inside the spread of any node's).
stretch_sketch_max <- 512

# value sorted by group (a positive whole number) and then by value, once
# for what a batch needs of it (each group's median, its sketch): sorted,
# and each group's number (groups, in their order), count (len) and place
# before its first value (start).
sorted_by <- function(group, value) {
  if (!length(group)) {
    return(list(sorted = value, groups = integer(), len = integer(), start = integer()))
  }
  o <- order(group, value, method = "radix")
  # a batch's hosts' numbers are a run of numbers: counted, not compared
  from <- min(group)
  counts <- tabulate(group - from + 1L)
  len <- counts[counts > 0]
  list(sorted = value[o], groups = which(counts > 0) + from - 1L, len = len,
    start = cumsum(len) - len)
}

# Each group's median of sorted_by's values (stats::median's: the middle
# value, or the mean of the middle two)
median_sorted <- function(s) {
  (s$sorted[s$start + (s$len + 1) %/% 2] + s$sorted[s$start + s$len %/% 2 + 1]) / 2
}

# Each group's values (sorted_by's, the groups named `host`) as at most
# stretch_sketch_max: all of them of weight 1, or the middle one of each of
# stretch_sketch_max runs of equal length, each of the run's weight.
sketch_sorted <- function(s, host) {
  k <- stretch_sketch_max
  kept <- pmin(s$len, k)
  at <- rep(seq_along(s$len), kept)
  j <- sequence(kept)
  n <- s$len[at]
  whole <- n <= k
  data.table(host = host[at], value = s$sorted[s$start[at] +
    ifelse(whole, j, ceiling((j - 0.5) * n / k))], weight = ifelse(whole, 1, n / k))
}

# The ranks' positions in batches of whole hosts, each of about ranks_max:
# a run's stretches are reduced a batch at a time (a million CPUs' are 10^8).
host_batches <- function(host, ranks_max) {
  h <- match(host, unique(host))
  size <- tabulate(h)
  batch <- (cumsum(size) - size) %/% ranks_max
  unname(split(seq_along(host), batch[h]))
}

# What the report needs of a run's stretches (noise_over_time, best =
# "run": the yardstick of nodes and cores alike), reduced a batch of hosts
# at a time, each rank's stretches read once, so that a million CPUs' 10^8
# stretches are never held at once, the batches shared among forked
# workers (lapply_cores), which return only what they reduced: hosts
# (host, typical_percent: the median of its stretches), node_offs (each
# host's stretches' distances from its typical one) and values (its
# stretches) as sketches (sketch_sorted: host, value, weight), cores (the
# cores noisier than the other cores of their node: core_standing's
# outliers), and, where each rank's share of time lost is given (`noise`,
# a value a rank in the run's order: the summary's noise_percent), tiles:
# the heat map's (heatmap_rows).
# batch_ranks: about how many ranks a batch.
stretch_yardsticks <- function(run, noise = NULL, batch_ranks = 8192) {
  context <- stretch_context(run, "run")
  detours <- records_detours(kernel_info(run$kernel))
  own <- if (!detours) thread_bests(run, "own")
  heat <- if (!is.null(noise)) heatmap_rows(noise, context)
  # hosts by number, in their order in the run: grouped and sorted faster than names
  names <- unique(context$host)
  host_id <- match(context$host, names)
  parts <- lapply_cores(host_batches(context$host, batch_ranks), function(rows) {
    b <- stretch_rows(run, rows, context)
    h <- host_id[b$at]
    values <- sorted_by(h, b$noise_percent)
    hosts <- data.table(host = names[values$groups], typical_percent = median_sorted(values))
    off <- abs(b$noise_percent - hosts$typical_percent[match(h, values$groups)])
    offs <- sorted_by(h, off)
    cells <- if (!is.null(heat)) {
      # the heat map's: each stretch against its rank's own best
      mine <- if (detours) b$noise_percent else lost_percent(run$kernel, b$total, b$n, own[b$at])
      data.table(row = heat$row_of[b$at], bin = b$bin, v = mine)[!is.na(v),
        .(sum = sum(v), n = .N), by = .(row, bin)]
    }
    list(hosts = hosts, node_offs = sketch_sorted(offs, names[offs$groups]),
      values = sketch_sorted(values, names[values$groups]),
      cores = core_standing(b, h)[outlier == TRUE], cells = cells)
  })
  part <- function(name) rbindlist(lapply(parts, `[[`, name))
  tiles <- if (!is.null(heat)) {
    cells <- part("cells")[, .(noise_percent = sum(sum) / sum(n)), keyby = .(row, bin)]
    data.table(x = stretch_middle_s(cells$bin, context$width_s),
      row = structure(cells$row, levels = heat$names, class = "factor"),
      noise_percent = cells$noise_percent)
  }
  list(hosts = part("hosts"), node_offs = part("node_offs"), values = part("values"),
    cores = part("cores"), tiles = tiles)
}

# The heat map's rows of a run of many CPUs: a row a CPU in the order of
# its share of time lost (noise, a value a rank), the noisiest last, its
# labels the levels (names); beyond tile_rows_max the rows banded as
# tile_bands bands them, a band's tile the mean of its rows'. row_of: each
# rank's row.
heatmap_rows <- function(noise, context) {
  label <- function(at) unit_label(context$unit[at], context$cpu[at], context$host[at])
  o <- order(noise)
  place <- integer(length(noise))
  place[o] <- seq_along(o)
  if (length(noise) > tile_rows_max) {
    return(list(row_of = tile_band_of(length(noise))[place],
      names = tile_band_names(label(utils::tail(o, tile_rows_single)))))
  }
  list(row_of = place, names = label(o))
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
  tpn <- thread_values(run, "ticks_per_ns", 0)
  min(own / tpn) * tpn
}
