# Streamed runs (fwq/ftq/psnap --stream): no sample files, but per rank a
# checkpoint (PREFIX_<rank>_stream.json: a histogram of the loss in 1%
# buckets, the longest losses, counts), a line a second
# (PREFIX_<rank>_seconds.dat) and the raw samples around each longest loss
# (PREFIX_<rank>_events_<generation>.dat, each event's in its byte range;
# older soaks: PREFIX_<rank>_event_<index>.dat). A run that ended
# (completely or by a signal) also has PREFIX.json; a run killed outright
# has only what its last checkpoint wrote, and is read from that.

stream_json_pattern <- "_[0-9]+_stream\\.json$"

# Streamed runs under the results: one per prefix, its ranks' checkpoints,
# with the run's own JSON (meta) where there is one. hosts: the ranks on the
# hosts matching it only. A rank's per-second and events files (4 MB a day
# and up to 40 MB a core) are left on disk: the plots read them for the
# ranks they show only (stream_detail).
read_streams <- function(stream_paths, run_paths, run_metas, hosts = NULL) {
  if (length(stream_paths) == 0) return(list())
  prefixes <- sub(stream_json_pattern, "", stream_paths)
  streams <- lapply(unique(prefixes), function(p) {
    meta_at <- match(paste0(p, ".json"), run_paths)
    paths <- sort(stream_paths[prefixes == p])
    infos <- lapply(paths, read_stream_info)
    if (!is.null(hosts)) {
      kept <- on_hosts(vapply(infos, function(i) i$host %||% NA_character_, ""), hosts)
      if (!any(kept)) return(NULL)
      paths <- paths[kept]
      infos <- infos[kept]
    }
    ranks <- Map(function(path, info) list(info = info, dir = dirname(path)), paths, infos,
      USE.NAMES = FALSE)
    ranks <- ranks[order(vapply(ranks, function(r) r$info$rank, 0))]
    meta <- if (!is.na(meta_at)) run_metas[[meta_at]]
    list(name = p, path = p, kernel = ranks[[1]]$info$stream_of, meta = meta,
      complete = isTRUE(meta$complete), ranks = ranks)
  })
  Filter(Negate(is.null), setNames(streams, unique(prefixes)))
}

# A rank's checkpoint, checked for the fields the report needs; its
# histogram's [bucket, count] pairs held as a matrix of two columns (as
# parsed, a list a pair: 89 KB for 500 buckets, against 8 KB)
read_stream_info <- function(path) {
  info <- read_json_file(path)
  for (field in c("stream_of", "rank", "ticks_per_ns", "reference", "histogram", "seconds_file")) {
    json_field(info, field, path)
  }
  pairs <- unlist(info$histogram$buckets, use.names = FALSE)
  if (!is.numeric(pairs) && !is.null(pairs) || length(pairs) %% 2 != 0) {
    stop_input(path, "histogram buckets are not [bucket, count] pairs of numbers")
  }
  info$histogram$buckets <- matrix(as.numeric(pairs), ncol = 2, byrow = TRUE,
    dimnames = list(NULL, c("bucket", "count")))
  info
}

# A rank of read_streams with its per-second lines and the samples around
# its longest losses read too
stream_detail <- function(rank) {
  info <- rank$info
  event_info <- Filter(function(e) !is.null(e$file), info$events)
  events <- lapply(event_info, function(e) {
    # the rank's events share a file, each in its byte range (older soaks:
    # a file an event)
    range <- if (!is.null(e$offset)) as.numeric(c(e$offset, e$bytes))
    d <- read_numbers(file.path(rank$dir, e$file), c("value", "tick"), e$samples, range = range)
    d[, index := e$first + seq_len(.N) - 1]
  })
  c(rank, list(seconds = read_stream_seconds(file.path(rank$dir, info$seconds_file)),
    events = events, event_info = event_info))
}

# The per-second lines written so far. The file grows while the run goes
# on and is synced at each checkpoint: after a kill, a last line may be cut
# short (it was never synced), and only whole lines are kept.
read_stream_seconds <- function(path) {
  columns <- c("second", "samples", "min", "max", "mean", "lost_percent", "stolen_percent")
  if (!file.exists(path)) stop_input(path, "missing (the stream's checkpoint names it)")
  lines <- readLines(path, warn = FALSE)
  size <- file.size(path)
  if (size > 0) {
    con <- file(path, "rb")
    seek(con, size - 1)
    whole <- readBin(con, "raw", 1) == as.raw(10)
    close(con)
    if (!whole) lines <- lines[-length(lines)]
  }
  lines <- lines[!startsWith(lines, "#")]
  if (length(lines) == 0) {
    return(as.data.table(setNames(rep(list(numeric()), length(columns)), columns)))
  }
  # one line alone, without its newline, would be taken for a file's name
  d <- fread(text = paste0(lines, "\n", collapse = ""), header = FALSE)
  # files written before the headline had six columns
  if (ncol(d) == length(columns) - 1) d[, stolen_percent := NA_real_]
  if (ncol(d) != length(columns)) stop_input(path, "not the seven numbers a line")
  setnames(d, columns)
  # a second no chunk of samples ended in has no stolen share of its own (nan)
  if (anyNA(d[, !"stolen_percent"])) stop_input(path, "not the seven numbers a line")
  d[, stolen_percent := as.numeric(stolen_percent)][]
}

# A rank's loss in us from the kernel's unit: FWQ's and P-SNAP's ticks
# (fixed work); FTQ counts, the share of the reference quantum's count
# missing, times the quantum.
stream_us_per_unit <- function(info) {
  if (stream_fixed_work(info$stream_of)) return(1 / info$ticks_per_ns / 1e3)
  info$quantum_ticks / info$reference / info$ticks_per_ns / 1e3
}

# Fixed work (FWQ, P-SNAP): a sample loses what it took beyond the
# reference; FTQ's quantum, what it counted short of it.
stream_fixed_work <- function(kernel) !fixed_time(kernel_info(kernel))

stream_loss <- function(kernel, value, reference) {
  if (falling(kernel_info(kernel))) reference - value else value - reference
}

# The histogram's buckets: counts, and each bucket's loss range in us.
stream_buckets <- function(info) {
  bucket <- info$histogram$buckets[, "bucket"]
  g <- info$histogram$growth
  k <- stream_us_per_unit(info)
  data.table(bucket = bucket, count = info$histogram$buckets[, "count"],
    lo_us = ifelse(bucket == 0, 0, g^(bucket - 1) * k), hi_us = ifelse(bucket == 0, k, g^bucket * k))
}

stream_label <- function(name, s) {
  r1 <- s$ranks[[1]]$info
  hz <- if (!stream_fixed_work(s$kernel)) 1e9 / (r1$quantum_ticks / r1$ticks_per_ns)
  hosts <- unique(vapply(s$ranks, function(r) r$info$host %||% NA_character_, ""))
  what <- paste(c(kernel_label(s$kernel), r1$work, if (!is.null(hz)) format_hz(hz)),
    collapse = " ")
  data.table(run = name, kernel = s$kernel, work = r1$work %||% NA_character_,
    sampling_hz = hz %||% NA_real_,
    granularity_us = s$meta$granularity_us %||% NA_real_,
    cpus = length(s$ranks),
    hosts = paste(hosts, collapse = " "), inject = "",
    label = sprintf("%s streamed, %d CPU%s on %s%s", what, length(s$ranks),
      if (length(s$ranks) == 1) "" else "s", paste(hosts, collapse = " "),
      if (s$complete) "" else " (to its last checkpoint)"))
}

# What stopped each rank of a streamed run (its run JSON's stopped_by:
# seconds, interval or signal; beyond inline_ranks ranks, its node files'),
# by rank; "killed" without a run JSON.
stream_stopped_by <- function(s) {
  if (is.null(s$meta)) return(function(rank) "killed")
  ranks <- s$meta$ranks %||% read_node_ranks(s$meta, paste0(s$path, ".json"))
  by <- setNames(vapply(ranks, function(r) r$stopped_by %||% NA_character_, ""),
    vapply(ranks, function(r) as.character(r$rank %||% NA), ""))
  function(rank) unname(by[as.character(rank)])
}

# One row per streamed run and rank: what it measured and how it ended.
stream_table <- function(streams) {
  rbindlist(lapply(names(streams), function(n) {
    s <- streams[[n]]
    stopped_by <- stream_stopped_by(s)
    rbindlist(lapply(s$ranks, function(r) {
      i <- r$info
      data.table(run = n, kernel = s$kernel, host = i$host, thread = i$rank, cpu = i$cpu,
        complete = isTRUE(i$complete), stopped_by = stopped_by(i$rank), samples = i$samples,
        lost_samples = i$lost_samples, seconds = i$seconds,
        stolen_percent = i$stolen_percent %||% NA_real_,
        stolen_ci95_low = i$stolen_ci95_low %||% NA_real_,
        stolen_ci95_high = i$stolen_ci95_high %||% NA_real_, lost_percent = i$lost_percent,
        checkpoints = i$checkpoints, checkpoint_ms_max = i$checkpoint_ms_max,
        memory_mib = i$memory_bytes / 2^20)
    }))
  }))
}

# The tails of streamed runs as tail_table gives them for the others, from
# the histograms: each percentile the upper edge of its bucket (within 1%),
# never past the longest loss; counts per hour above a threshold are the
# buckets wholly above it.
stream_tail_table <- function(streams) {
  rbindlist(lapply(names(streams), function(n) {
    s <- streams[[n]]
    rbindlist(lapply(s$ranks, function(r) {
      i <- r$info
      b <- stream_buckets(i)[order(bucket)]
      top <- max(vapply(i$events, function(e) e$loss, 0), 0) * stream_us_per_unit(i)
      total <- sum(b$count)
      below <- cumsum(b$count)
      q <- vapply(tail_probs, function(p) {
        if (total == 0) return(NA_real_)
        min(b$hi_us[which(below >= max(1, ceiling(p * total)))[1]], top)
      }, 0)
      hours <- i$seconds / 3600
      above <- vapply(tail_thresholds_us, function(th) sum(b$count[b$lo_us >= th]) / hours, 0)
      row <- data.table(run = n, kernel = s$kernel, host = i$host, thread = i$rank, cpu = i$cpu,
        samples = total, seconds = i$seconds)
      row[, paste0(names(tail_probs), "_us") := as.list(q)]
      row[, max_us := top]
      row[, paste0("above_", tail_thresholds_us, "us_per_hour") := as.list(above)]
      row[]
    }))
  }))
}

# A panel is a few hundred pixels wide: past this many points a line or a
# cloud only costs drawing time (a day is 86,400 seconds; an event's context
# of FWQ samples of 60 us, 30,000 samples).
stream_points_max <- 1500

# The whole run on one screen: per second, the share of the time the system
# took (%; the time lost in files written before the headline) and the
# longest sample's loss (us), one column of panels per rank; beyond
# stream_points_max seconds, each step's worst (steps of 10 s, a minute, 10
# minutes, an hour: a day is 1,440 minutes).
plot_stream_series <- function(s, title) {
  took <- all(vapply(s$ranks, function(r) !all(is.na(r$seconds$stolen_percent)), TRUE))
  d <- rbindlist(lapply(s$ranks, function(r) {
    i <- r$info
    # the second's worst sample: the longest (fixed work) or the smallest count
    worst <- if (stream_fixed_work(s$kernel)) r$seconds$max - i$reference else
      i$reference - r$seconds$min
    r$seconds[, .(second, share = if (took) stolen_percent else lost_percent,
      longest_us = pmax(worst, 0) * stream_us_per_unit(i),
      rank = unit_label(i$rank, i$cpu, i$host))]
  }))
  span <- max(d$second, 0) + 1
  step <- c(1, 10, 60, 600, 3600)
  step <- step[c(span / step[-length(step)] <= stream_points_max, TRUE)][1]
  if (step > 1) {
    worst <- function(x) if (all(is.na(x))) NA_real_ else max(x, na.rm = TRUE)
    d <- d[, .(share = worst(share), longest_us = max(longest_us)),
      by = .(rank, second = floor(second / step) * step)]
  }
  d[, hours := second / 3600]
  long <- melt(d[, !"second"], id.vars = c("rank", "hours"), variable.name = "figure")
  long[, figure := ifelse(figure == "share", if (took) "the system took (%)" else "time lost (%)",
    "longest loss (us)")]
  # hours for a soak, minutes or seconds for shorter runs
  span <- max(long$hours, 0)
  unit <- if (span > 2) c(1, "hours") else if (span > 2 / 60) c(60, "minutes") else c(3600, "s")
  long[, at := hours * as.numeric(unit[1])]
  ggplot2::ggplot(long, ggplot2::aes(at, value)) +
    ggplot2::geom_line(linewidth = 0.3, colour = "steelblue4") +
    ggplot2::facet_grid(figure ~ rank, scales = "free_y") +
    ggplot2::labs(title = title, x = paste(unit[2], "from the start"), y = NULL) + theme_noise()
}

# The samples around each of a rank's longest losses: each sample's loss
# (us) against its time from the event (ms), one small panel per event; of
# an event of more than stream_points_max samples, the longest and the
# shortest loss of each of stream_points_max / 2 equal slices of its time.
plot_stream_events <- function(r, kernel, title) {
  i <- r$info
  k <- stream_us_per_unit(i)
  d <- rbindlist(lapply(seq_along(r$events), function(j) {
    e <- r$event_info[[j]]
    x <- r$events[[j]]
    loss <- stream_loss(kernel, x$value, i$reference)
    d <- data.table(event = sprintf("%.0f us at %.1f s", e$loss * k,
      (e$tick - i$start_tick) / i$ticks_per_ns / 1e9),
      ms = (x$tick - e$tick) / i$ticks_per_ns / 1e6, loss_us = pmax(loss, 0) * k)
    if (nrow(d) <= stream_points_max) return(d)
    slices <- stream_points_max / 2
    d[, slice := pmin(floor((ms - min(ms)) / (diff(range(ms)) / slices)), slices - 1)]
    d[d[, .I[c(which.max(loss_us), which.min(loss_us))], by = slice]$V1, !"slice"]
  }))
  if (nrow(d) == 0) return(NULL)
  ggplot2::ggplot(d, ggplot2::aes(ms, loss_us)) +
    ggplot2::geom_point(size = 0.3, colour = "steelblue4") +
    ggplot2::facet_wrap(~event, scales = "free_y") +
    ggplot2::labs(title = title, x = "ms from the event", y = "loss (us)") + theme_noise()
}

stream_plots <- function(dir, name, s, label) {
  figs <- character()
  add <- function(plot, file, caption, height = 5) {
    if (!is.null(plot)) figs[[caption]] <<- save_plot(plot, dir, file, height = height)
  }
  # the noisiest by the headline (the time lost in runs written before it)
  took <- vapply(s$ranks, function(r) r$info$stolen_percent %||% r$info$lost_percent %||%
    NA_real_, numeric(1))
  all_ranks <- length(s$ranks)
  s$ranks <- lapply(s$ranks[detail_positions(took)], stream_detail)
  add(plot_stream_series(s, paste(label, ": the whole run")), paste0(name, "-stream-series"),
    paste0(label, ": per second of the run (time from its start), the share of the time ",
      "the system took (%), and the longest single loss (us) against the best sample of ",
      "the first second, one column per CPU (beyond ", format(stream_points_max, big.mark = ","),
      " seconds, the worst of each 10 s, minute, 10 minutes or hour). A day fits on one ",
      "screen: a step is a change that lasted, a spike a rare event (its samples are in the ",
      "next plots).",
      detail_note(length(s$ranks), all_ranks, where = "streams.csv")), height = 4)
  for (r in s$ranks) {
    add(plot_stream_events(r, s$kernel, paste(label, ": the longest losses, rank", r$info$rank)),
      paste0(name, "-stream-events-", r$info$rank), paste0(label, ", rank ", r$info$rank,
        ": the samples around each of the longest losses, each sample's loss (us) against ",
        "its time from the event (ms) (of an event of more than ",
        format(stream_points_max, big.mark = ","), " samples, the longest and the shortest ",
        "loss of each of ", stream_points_max / 2, " equal slices of its time). One spike is ",
        "a single detour; a shelf, a stretch of slow samples; spikes at even spacing, a ",
        "periodic source."),
      height = 2 + 1.2 * ceiling(length(r$events) / 3))
  }
  figs
}
