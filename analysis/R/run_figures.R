# Each figure with a caption saying what it shows, in which units, and how
# to read it. Files are named by the run's path (unique); titles and
# captions by its label. noise: the run's rows of the summary table, whose
# noisiest units get a panel each (detail.R).
run_figures <- function(dir, name, run, peaks, label, noise,
                        stretches = noise_over_time(run, best = "run")) {
  figs <- character()
  add <- function(plot, file, caption, height = 5) {
    figs[[caption]] <<- save_figure(plot, dir, file, height = height)
  }
  all_units <- length(run$threads)
  nodes <- uniqueN(noise$host)
  if (nodes > 1) {
    add(plot_core_map(noise, paste(label, ": every core of every node")),
      paste0(name, "-core-map"), paste0(label, ": the share of its time (%, colour) each core ",
        "lost, a row per node (", nodes, ", the noisiest on average on top",
        banded(nodes, "nodes"), "), a column per CPU number. A dark row is a bad node, a ",
        "dark column a CPU bad on every node (an interrupt's, a housekeeping thread's); ",
        "nodes.csv names the outliers. Solid lines ",
        "part the NUMA domains, dotted ones a core's first hardware thread from its SMT ",
        "siblings."),
      height = heatmap_height(nodes))
  }
  if (all_units > detail_units_max) {
    add(plot_unit_ranking(noise, paste(label, ": every CPU by the time it lost")),
      paste0(name, "-ranking"), paste0(label, ": the share of its time (%) each of the ",
        all_units, " CPUs lost, the noisiest first (black), with the median and 99th ",
        "percentile over all of them; where the kernel told them apart, the part in detours ",
        "(red) and in running slow (blue). A step at the left is a few bad CPUs; a curve ",
        "high all along, the whole machine."))
  }
  whole_run <- run
  run <- detail_run(run, noise$noise_percent)
  n_units <- length(run$threads)
  shown <- detail_note(n_units, all_units)
  if (run$kernel %in% c("fwq", "psnap")) {
    ns <- noise_samples(run)
    # scaled noise below one timer read over the best sample is not resolved;
    # FWQ samples are in ticks, P-SNAP iterations in ns
    resolution_ns <- run$meta$calibration$timer_resolution_ns
    unit_per_ns <- if (run$kernel == "fwq") run$threads[[1]]$ticks_per_ns else 1
    resolution <- resolution_ns * unit_per_ns / max(ns[, min(value), by = unit]$V1)
    add(plot_noise_histogram(ns, resolution, paste(label, ": scaled noise per CPU")),
      paste0(name, "-histogram"), paste0(label, ": how many samples (y, log) lost each ",
        "fraction of their time, (t - min) / min (x, log), one panel per CPU. A quiet CPU has ",
        "everything in the first bins; each bar to the right is samples that lost that share.",
        shown))
    add(plot_noise_series(ns, resolution, paste(label, ": scaled noise over time")),
      paste0(name, "-series"), paste0(label, ": the scaled noise (t - min) / min of the ",
        "samples over the run (s), the largest of each stretch shown. Points in rows at one ",
        "height, evenly spaced, are a periodic source; a raised band, a slower stretch.", shown),
      height = 1.5 + 1.5 * n_units)
  }
  if (run$kernel == "ftq") {
    shown_cpus <- vapply(run$threads, function(t) paste(t$host, t$cpu), character(1))
    spectra <- peaks$spectra[run == name][paste(host, cpu) %in% shown_cpus]
    add(plot_spectrum(spectra, peaks$peaks[run == name][paste(host, cpu) %in% shown_cpus],
      paste(label, ": spectrum of the counts")),
      paste0(name, "-spectrum"), paste0(label, ": the power (counts^2, log) of the FTQ ",
        "counts at each frequency (Hz), per CPU. A line standing out of the floor is noise ",
        "that repeats at that frequency; its colour says whether a run at another sampling ",
        "frequency confirms it (external) or it moved with the sampling (artifact).", shown),
      height = 1.5 + 2 * n_units)
  }
  if (run$kernel == "psnap") {
    add(plot_psnap_histogram(psnap_histogram(whole_run), paste(label,
      ": iteration times, all ranks")),
      paste0(name, "-psnap-histogram"), paste0(label, ": how many iterations (y) of the ",
        "calibrated spin took each time (us), over all ranks, as the ranks counted them. A ",
        "quiet system is one narrow peak at the granularity; iterations to its right lost ",
        "that much to noise."))
    tails <- psnap_host_tails(whole_run)
    if (nrow(tails) > 1) {
      hosts <- tails$host[detail_positions(tails$p99_us)]
      iterations <- psnap_iterations(setNames(list(hosts_run(whole_run, hosts)), name))
      add(plot_psnap_nodes(iterations, paste(label, ": iteration times per node")),
        paste0(name, "-psnap-nodes"), paste0(label, ": P-SNAP iteration times (us) per ",
          "node: a node whose peak sits right of the others', or whose tail is longer, is ",
          "the noisy one (nodes.csv names it).", detail_note(length(hosts), nrow(tails),
            "nodes (by the largest 99th percentile of their ranks' loss)", "nodes.csv")),
        height = 1.5 + 1.5 * length(hosts))
    }
  }
  if (run$kernel == "selfish" && sum(vapply(run$threads, function(t) nrow(t$data), 0)) > 0) {
    detours <- selfish_detours(setNames(list(run), name))
    add(plot_detour_histogram(detours, paste(label, ": detour lengths")),
      paste0(name, "-detour-histogram"), paste0(label, ": how many detours (y) of each ",
        "length (us, log) the selfish loop recorded, per CPU. Clusters are sources: the ",
        "timer tick, interrupts, the hypervisor; their length is what a process loses each time.",
        shown))
    add(plot_detour_timeline(detours, paste(label, ": detours over time")),
      paste0(name, "-detour-timeline"), paste0(label, ": each detour's length (us, log) at ",
        "its start (s from the start of the run), per CPU. Evenly spaced rows are periodic ",
        "noise; the period is the spacing.", shown),
      height = 1.5 + 1.5 * n_units)
  }
  add(plot_heatmap(stretches, paste(label, ": noise per CPU over time"),
    stretch_percent_against(stretches, whole_run)),
    paste0(name, "-heatmap"), paste0(label, ": the share of time lost to noise (%, colour) ",
      "in 100 equal stretches of the run (s), one row per CPU", if (all_units > detail_units_max)
        ", the noisiest on top", banded(all_units, "CPUs"), ". Dark cells are stretches that ",
      "lost most; a dark column hit every CPU at once, a dark row is one noisy CPU."),
    height = heatmap_height(all_units))
  figs
}

# A tiled figure's caption, of its rows beyond tile_rows_max (tile_bands)
banded <- function(rows, what) {
  if (rows <= tile_rows_max) return("")
  sprintf("; of %d %s, the %d noisiest a row each and the others averaged in bands of %.0f %s",
    rows, what, tile_rows_single, (rows - tile_rows_single) / (tile_rows_max - tile_rows_single),
    what)
}

# The predicted slowdown of a run (its rows of the scale table), if any.
scale_figure <- function(dir, name, scale, label) {
  if (is.null(scale) || nrow(scale) == 0) return(character())
  file <- save_figure(plot_scale(scale, paste(label, ": predicted slowdown at scale")),
    dir, paste0(name, "-scale"))
  setNames(file, paste0(label, ": the slowdown (phase time / T, 1 = none) this noise would ",
    "cause a bulk-synchronous application computing T (us or ms) between global ",
    "synchronisations, against the number of processes N (log), one line per T; left with ",
    "each process at its own offset in the trace, right with all at the same (co-scheduled). ",
    "Beyond the trace's windows the prediction stops growing: rarer events than the trace ",
    "holds are not in it."))
}
