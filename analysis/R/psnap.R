# The P-SNAP tables of a PRACE Tier-0 assessment (as the PRACE benchmark
# reports give them): one row per run (nodes, tasks, calibration time, mean
# and standard deviation of the run time, OS noise %), and one per core count
# (system correlation, noise %, run-time SD) over every run with that many
# ranks. Beside PRACE's figures, what the noise was: the kernel's split of
# each rank's time into detours and running slow (means over the ranks), so
# that a slower CPU is not read as interruptions.

psnap_runs <- function(runs) {
  psnap <- Filter(function(r) r$kernel == "psnap", runs)
  rbindlist(lapply(names(psnap), function(name) {
    run <- psnap[[name]]
    # from the ranks' stats of their iteration times, as the kernel computes
    # its summary: each rank's run time, and the calibration time of its
    # ideal iteration
    m <- run_moments(run)
    totals <- m$mean * m$samples / 1e9
    calibration <- mean(rank_values(run, "ideal_us") * m$samples / 1e6)
    correlation <- rank_values(run, "correlation")
    data.table(
      run = name,
      nodes = uniqueN(rank_values(run, "host", NA_character_)),
      tasks = rank_count(run),
      calibration_time_s = calibration,
      mean_run_time_s = mean(totals),
      sd_run_time_s = if (length(totals) > 1) stats::sd(totals) else 0,
      os_noise_percent = 100 * (mean(totals) - calibration) / calibration,
      stolen_percent = mean(rank_values(run, "stolen_percent")),
      slowdown_percent = mean(rank_values(run, "slowdown_percent")),
      # PRACE's "system correlation": how much the other ranks are hit when
      # rank 0 is; a single rank correlates with itself
      system_correlation = if (length(correlation) > 1) mean(correlation[-1]) else 1
    )
  }))
}

# The catalogue's psnap_cores table: psnap_by_cores of the runs' table.
psnap_core_table <- function(runs) psnap_by_cores(psnap_runs(runs))

psnap_by_cores <- function(run_table) {
  if (nrow(run_table) == 0) return(data.table())
  run_table[, .(
    runs = .N,
    calibration_time_s = mean(calibration_time_s),
    mean_run_time_s = mean(mean_run_time_s),
    system_correlation = mean(system_correlation),
    noise_percent = mean(os_noise_percent),
    stolen_percent = mean(stolen_percent),
    slowdown_percent = mean(slowdown_percent),
    run_time_sd_s = mean(sd_run_time_s)
  ), by = .(cores = tasks)][order(cores)]
}

# P-SNAP per node, as the PRACE notes sum the ranks' '#' lines by host (a
# node's ranks in the kernel's stdout, or beyond 64 ranks in its node's
# histograms file): the ranks' total times against the time their
# iterations would take at the granularity, and the node's slowdown,
# (1 - nominal / total) * 100 as the notes' awk computes it.
psnap_node_table <- function(runs) {
  psnap <- Filter(function(r) r$kernel == "psnap", runs)
  out <- rbindlist(lapply(names(psnap), function(name) {
    run <- psnap[[name]]
    reps <- as.numeric(run$meta$reps %||% NA_real_)
    granularity_us <- as.numeric(run$meta$granularity_us %||% NA_real_)
    ranks <- data.table(host = rank_values(run, "host", NA_character_),
      total_us = rank_values(run, "total_time_us"))
    ranks[, .(run = name, ranks = .N, reps = reps, granularity_us = granularity_us,
      total_time_s = sum(total_us) / 1e6,
      nominal_time_s = .N * reps * granularity_us / 1e6,
      slowdown_percent = 100 * (1 - .N * reps * granularity_us / sum(total_us))), by = host]
  }))
  if (nrow(out)) setcolorder(out, c("run", "host"))
  out
}

# Iteration times over all ranks of all P-SNAP runs, in us (their files).
psnap_iterations <- function(runs) {
  psnap <- Filter(function(r) r$kernel == "psnap", runs)
  rbindlist(lapply(names(psnap), function(name) {
    run_long(psnap[[name]], function(d, t) d[, .(run = name, us = ns / 1e3)])
  }))
}

# Every iteration of the run by its time, as the kernel counted them where
# the ranks ran (the JSON's iteration_histogram): buckets from lo to hi us
# holding n iterations, and the iterations of overflow_from_us or more.
psnap_histogram <- function(run) {
  h <- run$meta$iteration_histogram
  if (is.null(h$bucket_us) || is.null(h$first_us) || is.null(h$counts)) {
    stop_input(run$path, paste("the P-SNAP run's JSON has no iteration_histogram:",
      "written by a noisebench older than its analysis; run it again"))
  }
  if (identical(h$counted_by, "files")) h <- psnap_histogram_of_files(run, h)
  lo <- h$first_us + (seq_along(h$counts) - 1) * h$bucket_us
  list(bins = data.table(lo = lo, hi = lo + h$bucket_us, n = as.numeric(unlist(h$counts))),
    bucket_us = h$bucket_us, overflow = h$overflow, overflow_from_us = h$overflow_from_us)
}

# The iteration histogram h of the ranks a report of some hosts kept,
# counted from their files in the kernel's buckets (psnap.c): bucket
# floor(us / bucket_us), those from overflow_from_us on in the overflow.
psnap_histogram_of_files <- function(run, h) {
  nbins <- round(h$overflow_from_us / h$bucket_us)
  bin <- floor(psnap_iterations(list(kept = run))$us / h$bucket_us)
  counts <- tabulate(bin[bin < nbins] + 1, nbins)
  used <- which(counts > 0)
  # as the kernel writes them: from the first bucket used to the last
  first <- if (length(used)) min(used) else 1
  kept <- if (length(used)) counts[first:max(used)] else numeric()
  utils::modifyList(h, list(first_us = (first - 1) * h$bucket_us, counts = kept,
    overflow = sum(bin >= nbins)))
}

# The hosts of a run by the tail of their ranks' iterations: the largest of
# their ranks' 99th percentiles of the time an iteration lost (the JSON's
# tails), without reading a sample.
psnap_host_tails <- function(run) {
  data.table(host = thread_values(run, "host", ""),
    p99_us = run_tails(run)$p99_us)[, .(p99_us = max(p99_us)), by = host]
}

# The run with only the ranks on the given hosts.
hosts_run <- function(run, hosts) {
  subset_run(run, which(thread_values(run, "host", "") %in% hosts))
}

# The report's P-SNAP plots (the catalogue's plots): the iteration times
# of every run, a panel a run, and of its nodes.
psnap_plots <- function(dir, runs, summary, label) {
  chosen <- panel_runs(Filter(function(n) runs[[n]]$kernel == "psnap", names(runs)), summary)
  if (length(chosen) == 0) return(NULL)
  shown <- lapply(chosen, function(n) psnap_shown(psnap_histogram(runs[[n]])))
  # the label made outside the table's scope: its column n (a bin's count) would be the argument
  bins <- rbindlist(Map(function(s, name) {
    run_label <- label(name)
    s$bins[, label := run_label]
  }, shown, chosen))
  notes <- unlist(Map(function(s, n) if (!is.null(s$note)) paste0(label(n), ": ", s$note),
    shown, chosen))
  bins[, label := factor(label, levels = unique(label))]
  p <- plot_bins(bins) + ggplot2::facet_wrap(~label, ncol = 2, scales = "free") +
    ggplot2::labs(title = "P-SNAP iteration times, all ranks", x = "iteration time (\u00b5s)",
      y = "iterations") + theme_noise()
  c(fig(save_plot(p, dir, "psnap-iterations", height = 1.5 + 1.8 * ceiling(length(chosen) / 2)),
    paste("P-SNAP, a panel a run: how many iterations (y) of the calibrated spin took each",
      "time (us), over all ranks, as the ranks counted them, up to the 99.9th percentile.",
      "A quiet system is one narrow peak at the granularity; iterations to its right lost",
      "that much to noise.", panels_note(chosen),
      if (length(notes)) paste0(paste(notes, collapse = "; "), "."))),
    unlist(lapply(chosen, function(n) psnap_nodes_plot(dir, n, runs[[n]], label(n)))))
}

psnap_nodes_plot <- function(dir, name, run, label) {
  tails <- psnap_host_tails(run)
  if (nrow(tails) <= 1) return(NULL)
  hosts <- tails$host[detail_positions(tails$p99_us)]
  iterations <- psnap_iterations(setNames(list(hosts_run(run, hosts)), name))
  fig(save_plot(plot_psnap_nodes(iterations, paste(label, ": iteration times per node")),
    dir, paste0(name, "-psnap-nodes"), height = 1.5 + 1.5 * length(hosts)),
    paste0(label, ": P-SNAP iteration times (us) per node: a node whose peak sits right of ",
      "the others', or whose tail is longer, is the noisy one (nodes.csv names it).",
      detail_note(length(hosts), nrow(tails),
        "nodes (by the largest 99th percentile of their ranks' loss)", "nodes.csv")))
}

# The kernel's buckets (1 us unless widened) up to the 99.9th percentile;
# the few longer iterations are counted in a note (NULL: none left out), not
# stretched across the axis.
psnap_shown <- function(histogram) {
  bins <- histogram$bins[n > 0]
  total <- sum(bins$n) + histogram$overflow
  shown <- bins[cumsum(n) <= ceiling(0.999 * total) | seq_len(.N) == 1]
  over <- total - sum(shown$n)
  # 2 significant digits, never as an exponent (all of them: 100, not 1e+02)
  hidden <- sprintf("%.0f iterations (%s%%)", over,
    trimws(formatC(signif(100 * over / total, 2), format = "fg", digits = 2)))
  beyond <- sprintf("%.0f us or more, beyond the kernel's buckets", histogram$overflow_from_us)
  note <- if (over == 0) {
    NULL
  } else if (over == histogram$overflow) {
    sprintf("%s of %s, are not shown", hidden, beyond)
  } else {
    sprintf("%s longer than %.0f us are not shown%s", hidden, max(shown$hi),
      if (histogram$overflow > 0) sprintf(", %.0f of them %s", histogram$overflow, beyond) else "")
  }
  list(bins = shown, note = note)
}

# P-SNAP's iteration times combined per node, as the PRACE assessments
# compared nodes: one histogram per host over all its ranks.
plot_psnap_nodes <- function(iterations, title) {
  top <- stats::quantile(iterations$us, 0.999, names = FALSE)
  d <- iterations[us <= top]
  breaks <- seq(floor(min(d$us)), ceiling(top) + 1)
  counts <- rbindlist(lapply(unique(d$host), function(h) {
    bin_counts(d[host == h]$us, h, breaks)
  }))
  plot_bins(counts) +
    ggplot2::facet_wrap(~label, ncol = 1, scales = "free_y") +
    ggplot2::labs(title = title, x = "iteration time (us), 1 us bins", y = "iterations",
      caption = "the longest 0.1% of the iterations of all nodes are not shown") +
    theme_noise()
}
