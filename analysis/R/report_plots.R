# The report's plots, each drawn once for the runs it compares (a panel a
# run), not a set a run: a survey of 14 runs gets about ten pictures, and a
# run of many CPUs adds only its whole-system pictures (core map, ranking,
# heat map of banded rows). Returns, in page order, a named vector each:
# caption = file. The slowdown's (scale_plot) is drawn once the model is
# done.

report_plots <- function(dir, runs, tables, labels, peaks, yardsticks, places = NULL) {
  label <- function(n) labels$label[match(n, labels$run)]
  small <- panel_runs(Filter(function(n) length(runs[[n]]$threads) <= detail_units_max,
    names(runs)), tables$summary)
  figs <- c(
    whole_system_plots(dir, runs, tables$summary, label, places),
    loss_by_length_plot(dir, tables$loss_by_length, labels),
    causes_plot(dir, tables$causes, tables$summary, labels),
    noise_over_time_plot(dir, runs[small], label, small),
    unlist(lapply(setdiff(names(runs), small), function(n) {
      big_heatmap_plot(dir, n, yardsticks[[n]]$tiles, rank_count(runs[[n]]), label(n))
    })),
    scaled_noise_plot(dir, runs, tables$summary, label),
    spectra_plot(dir, runs, peaks, tables$summary, label),
    unlist(lapply(kernel_plots(), function(f) {
      kernel_function(f)(dir, runs, tables$summary, label)
    }))
  )
  figs[!is.na(figs)]
}

fig <- function(file, caption) setNames(file, caption)

# A plot of a panel a run holds at most this many: of more runs, those
# whose median CPU the system took most from, in report order (their
# caption says so; the tables hold every run).
plot_panels_max <- 12

panel_runs <- function(names, summary, k = plot_panels_max) {
  of <- length(names)
  if (of > k) {
    noise <- summary[run %in% names, .(took = stats::median(noise_percent)), by = run]
    names <- names[names %in% noise[order(-took)]$run[seq_len(k)]]
  }
  structure(names, of = of)
}

# What a caption adds when a plot shows some of the runs only.
panels_note <- function(shown) {
  of <- attr(shown, "of") %||% length(shown)
  if (length(shown) >= of) return("")
  sprintf(" Of the %d runs, the %d whose median CPU the system took most from.", of, length(shown))
}

whole_system_plots <- function(dir, runs, summary, label, places = NULL) {
  unlist(lapply(names(runs), function(n) {
    noise <- summary[run == n]
    nodes <- uniqueN(noise$host)
    c(
      if (nodes > 1 && length(location_levels(places))) {
        machine_map_plot(dir, paste0(n, "-machine-map"), noise, places, label(n))
      },
      if (nodes > 1) {
        fig(save_plot(plot_core_map(noise, plot_title(label(n), "every core of every node")),
          dir, paste0(n, "-core-map"), height = heatmap_height(nodes)),
          paste0(label(n), ": the share of its time (%, colour) the system took from each ",
            "core, a row per ",
            "node (", nodes, ", the noisiest on average on top", banded(nodes, "nodes"),
            "), a column per CPU number. A dark row is a bad node, a dark column a CPU bad ",
            "on every node (an interrupt's, a housekeeping thread's); nodes.csv names the ",
            "outliers. Solid lines part the NUMA domains, dotted ones a core's first hardware ",
            "thread from its SMT siblings."))
      },
      if (length(runs[[n]]$threads) > detail_units_max) {
        fig(save_plot(plot_unit_ranking(noise,
          plot_title(label(n), "every CPU by the time the system took")),
          dir, paste0(n, "-ranking")),
          paste0(label(n), ": the share of its time (%) the system took from each of the ",
            length(runs[[n]]$threads), " CPUs (red), the noisiest first, with the median and ",
            "99th percentile over all of them; beside it, what each lost in all (black) and ",
            "the work's slowdown (blue). A step at the left is a few bad CPUs; a curve high ",
            "all along, the whole machine."))
      }
    )
  }))
}

loss_by_length_plot <- function(dir, lengths, labels) {
  if (is.null(lengths) || nrow(lengths) == 0) return(NULL)
  lengths <- with_labels(lengths, labels)
  fig(save_plot(plot_loss_by_length(lengths, "time lost by the length of the loss"), dir,
    "loss-by-length", height = loss_by_length_height(lengths)),
    paste("Where the time went, by how long each loss was: the share of the CPU time (%)",
      "lost in samples whose loss fell in each bucket (or detours, where a kernel records only",
      "those), every CPU of each run summed by the kernels themselves, a bar per run.",
      "Many short losses",
      "(interrupts, timer ticks) sit at the left, rare long ones (daemons, stalls) at the",
      "right. loss_by_length.csv adds how many a core-hour."))
}

causes_plot <- function(dir, causes, summary, labels) {
  if (is.null(causes) || nrow(causes) == 0) return(NULL)
  # a bar per CPU shown in detail, of the traced runs with most noise
  traced <- panel_runs(unique(causes$run), summary, plot_panels_max %/% 2)
  causes <- causes[detail_rows(summary[run %in% traced]), on = .(run, host, cpu),
    nomatch = NULL]
  fig(save_plot(plot_causes(with_labels(causes, labels), "noise by cause"), dir, "causes",
    height = 1.5 + 0.5 * nrow(unique(causes[, .(run, unit)]))),
    paste("Noise by cause: the share (%) of the losses' time each class of cause held, per",
      "run and CPU (of a run of more than", detail_units_max, "CPUs, the",
      detail_units_max - 1, "noisiest and the quietest; causes.csv has every one).",
      "Hardware is what nothing in the kernel's trace explains.", panels_note(traced)))
}

# The runs of a few CPUs in one heat map, a panel a run, a row a CPU.
noise_over_time_plot <- function(dir, runs, label, shown = names(runs)) {
  if (length(runs) == 0) return(NULL)
  d <- rbindlist(lapply(names(runs), function(n) {
    s <- noise_over_time(runs[[n]])
    data.table(run = label(n), x = s$time_s, row = unit_label(s$unit, s$cpu, s$host),
      noise_percent = s$noise_percent)
  }))
  d[, run := factor(run, levels = unique(run))]
  # each run's stretches their own width: ggplot would take the narrowest
  # spacing of all runs for every panel
  d[, w := { u <- sort(unique(x)); if (length(u) > 1) min(diff(u)) else 1 }, by = run]
  rows <- nrow(unique(d[, .(run, row)]))
  p <- ggplot2::ggplot(d, ggplot2::aes(x, row, fill = noise_percent, width = w)) +
    ggplot2::geom_tile() +
    ggplot2::scale_fill_viridis_c(option = "magma", trans = "sqrt", direction = -1) +
    ggplot2::facet_wrap(~run, ncol = 1, scales = "free") +
    ggplot2::labs(title = "noise per CPU over time", x = "time from the start of the run (s)",
      y = NULL, fill = "noise %") +
    theme_noise()
  fig(save_plot(p, dir, "noise-over-time", height = 1 + 0.45 * rows + 0.35 * length(runs)),
    paste("Every run of a few CPUs, a panel each: the share of time lost to noise (%, colour)",
      "in 100 equal stretches of the run (s), one row per CPU. Dark cells are stretches that",
      "lost most; a dark column hit every CPU at once, a dark row is one noisy CPU.",
      panels_note(shown)))
}

big_heatmap_plot <- function(dir, name, tiles, n, label) {
  fig(save_plot(plot_loss_tiles(tiles, "time from the start (s)", "CPUs",
    plot_title(label, "noise per CPU over time"), rows = n), dir, paste0(name, "-heatmap"),
    height = heatmap_height(n)),
    paste0(label, ": the share of time lost to noise (%, colour) in 100 equal stretches of ",
      "the run (s), one row per CPU, the noisiest on top", banded(n, "CPUs"), ". Dark cells ",
      "are stretches that lost most; a dark column hit every CPU at once, a dark row is one ",
      "noisy CPU."))
}

# The scaled noise of the kernels that time a fixed work (FWQ's and
# P-SNAP's), a panel a run, the CPUs shown in detail.
timed_work <- function(info) !fixed_time(info) && !records_detours(info)

scaled_noise_plot <- function(dir, runs, summary, label) {
  chosen <- panel_runs(names(runs_where(runs, timed_work)), summary)
  if (length(chosen) == 0) return(NULL)
  d <- rbindlist(lapply(chosen, function(n) {
    run <- detail_run(runs[[n]], summary[run == n]$noise_percent)
    ns <- noise_samples(run)
    resolution_ns <- run$meta$calibration$timer_resolution_ns
    unit_per_ns <- values_per_ns(kernel_info(run$kernel), run$threads[[1]]$ticks_per_ns)
    resolution <- resolution_ns * unit_per_ns / max(ns[, min(value), by = unit]$V1)
    data.table(run = label(n), noise = pmax(ns$noise, resolution), resolution = resolution)
  }))
  lowest <- min(d$resolution)
  bins <- bin_counts(d$noise, d$run, log_breaks(lowest, max(d$noise)))
  bins[, label := factor(label, levels = unique(d$run))]
  p <- plot_bins(bins) + ggplot2::scale_x_log10(labels = format_number) +
    ggplot2::facet_wrap(~label, ncol = 2) +
    ggplot2::labs(title = "scaled noise of each sample", y = "samples",
      x = "scaled noise (t - min) / min, bins of 1/20 decade") +
    theme_noise()
  fig(save_plot(p, dir, "scaled-noise", height = 1.5 + 1.6 * ceiling(length(chosen) / 2)),
    paste(paste0(kernel_labels(timed_work), ", a panel a run: how many samples (y, log) lost"),
      "each fraction of",
      "their time, (t - min) / min (x, log), over the CPUs shown in detail (of a run of more",
      "than", detail_units_max, "CPUs, the", detail_units_max - 1, "noisiest and the quietest).",
      "A quiet CPU has everything in the first bins (within a timer read of the best);",
      "each bar to the right is samples that lost that share.", panels_note(chosen)))
}

spectra_plot <- function(dir, runs, peaks, summary, label) {
  if (is.null(peaks$spectra) || nrow(peaks$spectra) == 0) return(NULL)
  timed <- names(runs_where(runs, fixed_time))
  # a panel a run and CPU: the CPUs shown in detail of the runs with most noise
  keep <- panel_runs(timed, summary, plot_panels_max %/% min(detail_units_max,
    max(1, max(summary[run %in% timed, .N, by = run]$N))))
  shown <- detail_rows(summary[run %in% keep])[, key := paste(run, host, cpu)]$key
  spectra <- peaks$spectra[paste(run, host, cpu) %in% shown]
  lines <- peaks$peaks[paste(run, host, cpu) %in% shown]
  # a panel a run and CPU, named by the run's label
  spectra[, host := paste0(label(run), ", ", host)]
  if (nrow(lines)) lines[, host := paste0(label(run), ", ", host)]
  panels <- nrow(unique(spectra[, .(host, cpu)]))
  fig(save_plot(plot_spectrum(spectra, lines, paste("spectra of the",
    kernel_labels(fixed_time), "counts")), dir, "spectra",
    height = 1.5 + 1.6 * panels),
    paste(paste0(kernel_labels(fixed_time), ", a panel a run and CPU shown in detail: the power"),
      "(counts^2, log) of the",
      "counts at each frequency (Hz). A line standing out of the floor is noise that",
      "repeats at that frequency; its colour says whether a run at another sampling",
      "frequency confirms it (external) or it moved with the sampling (artifact).",
      panels_note(keep)))
}


# The predicted slowdown of every run without injection at 1 ms phases.
scale_plot <- function(dir, scale, label) {
  if (is.null(scale) || nrow(scale) == 0) return(NULL)
  d <- scale[!injected & phase_us == 1000]
  if (nrow(d) == 0) return(NULL)
  d[, run_label := label(run)]
  p <- ggplot2::ggplot(d, ggplot2::aes(processes, slowdown, colour = run_label)) +
    ggplot2::geom_line() + ggplot2::geom_point(size = 1) +
    ggplot2::scale_x_log10(labels = function(x) format(x, big.mark = ",", scientific = FALSE)) +
    ggplot2::facet_wrap(~mode) +
    ggplot2::labs(title = "predicted slowdown, 1 ms phases", x = "processes (N)",
      y = "slowdown (phase time / T)", colour = NULL) +
    theme_noise() + ggplot2::theme(legend.position = "bottom", legend.direction = "vertical")
  fig(save_plot(p, dir, "scale", height = 4 + 0.2 * uniqueN(d$run)),
    paste("The slowdown (phase time / T, 1 = none) each run's noise would cause a",
      "bulk-synchronous application computing 1 ms between global synchronisations, against",
      "the number of processes N (log); left with each process at its own offset in the",
      "trace, right with all at the same (co-scheduled). scale.csv has every phase length",
      "from 10 us to 100 ms. Beyond the trace's windows the prediction stops growing: rarer",
      "events than the trace holds are not in it."))
}

# A tiled plot's caption, of its rows beyond tile_rows_max (tile_bands)
banded <- function(rows, what) {
  if (rows <= tile_rows_max) return("")
  sprintf("; of %d %s, the %d noisiest a row each and the others averaged in bands of %.0f %s",
    rows, what, tile_rows_single, (rows - tile_rows_single) / (tile_rows_max - tile_rows_single),
    what)
}
