# RESULTS_DIR/report/: index.html, the figures as PNG and the tables as CSV.
# Everything is read and checked first and written into a temporary
# directory that replaces report/ only when complete: a bad input file or a
# failure half-way leaves the previous report, or none, never half of one.

machine_description <- function(data) {
  first <- data$runs[[1]]$meta
  m <- first$machine %||% data$machine$machine
  cal <- data$machine %||% first$calibration
  c(
    host = m$hostname, cpu = m$cpu_model, architecture = m$arch,
    `CPUs online` = m$cpus_online, cores = m$cores, `SMT threads per core` = m$smt,
    `NUMA nodes` = m$numa_nodes, kernel = m$kernel_release, `kernel command line` = m$kernel_cmdline,
    isolcpus = if (nzchar(m$isolcpus %||% "")) m$isolcpus else "none",
    nohz_full = if (nzchar(m$nohz_full %||% "")) m$nohz_full else "none",
    clocksource = m$clocksource, `virtual machine` = m$virtual_machine,
    timer = first$timer, `ticks per ns` = signif(first$ticks_per_ns, 6),
    `timer read (ns)` = signif(cal$timer_read_ns %||% NA, 3),
    tuning_description(first$tuning)
  )
}

# One row per host the runs measured on: each run describes every host its
# ranks ran on ("machines"; before that, only its own "machine").
machines_table <- function(runs) {
  all <- unlist(lapply(runs, function(r) r$meta$machines %||% list(r$meta$machine)),
    recursive = FALSE)
  rows <- rbindlist(lapply(all, function(m) data.table(
    host = m$hostname %||% NA_character_, cpu = m$cpu_model %||% NA_character_,
    architecture = m$arch %||% NA_character_, cpus_online = m$cpus_online %||% NA_integer_,
    cores = m$cores %||% NA_integer_, smt = m$smt %||% NA_integer_,
    numa_nodes = m$numa_nodes %||% NA_integer_, kernel = m$kernel_release %||% NA_character_,
    isolcpus = m$isolcpus %||% "", nohz_full = m$nohz_full %||% "",
    clocksource = m$clocksource %||% NA_character_,
    virtual_machine = m$virtual_machine %||% NA_character_
  )), fill = TRUE)
  unique(rows, by = "host")
}

# The machines table on the page: one row per kind of machine (every
# column alike but the host), with how many hosts and the first of them. A
# Tier-0 system of 10,000 identical nodes is one row; machines.csv has each.
machine_kinds <- function(machines) {
  kind <- setdiff(names(machines), "host")
  machines[, .(hosts = .N, host = if (.N == 1) host else paste(host[1], "...")), by = kind][,
    c("host", "hosts", kind), with = FALSE]
}

# The verdicts on the page: those not diminutive first, at most
# detail_units_max rows, the caption saying how many of how many.
verdicts_on_page <- function(verdicts, caption) {
  shown <- head(verdicts[order(diminutive)], detail_units_max)
  if (nrow(shown) < nrow(verdicts)) {
    caption <- sprintf("%s; the %d of %d rows not diminutive first, verdicts.csv has every one",
      caption, nrow(shown), nrow(verdicts))
  }
  html_table(shown, caption)
}

# What a tuner checks first (the kernels' "tuning" object), where recorded.
tuning_description <- function(t) {
  if (is.null(t)) return(NULL)
  or_none <- function(x) if (nzchar(x %||% "")) x else "none"
  c(
    HZ = or_none(t$hz), NO_HZ_FULL = or_none(t$no_hz_full), preemption = or_none(t$preempt),
    `kernel configuration from` = or_none(t$kernel_config), rcu_nocbs = or_none(t$rcu_nocbs),
    `transparent huge pages` = or_none(t$transparent_hugepages),
    `irqbalance running` = if (isTRUE(t$irqbalance_running)) "yes" else "no",
    `noisebench commit` = t$noisebench_commit, compiler = t$compiler,
    `MPI library` = or_none(t$mpi_library)
  )
}

# Every warning the kernels gave about the measured CPUs' tuning, once, with
# the runs that gave it.
tuning_findings <- function(runs) {
  w <- rbindlist(lapply(names(runs), function(n) {
    found <- unlist(runs[[n]]$meta$tuning$warnings)
    if (length(found)) data.table(finding = found, run = n)
  }))
  if (nrow(w) == 0) return(data.table(finding = character(), runs = character()))
  w[, .(runs = paste(run, collapse = " ")), by = finding]
}

write_tables <- function(dir, tables) {
  for (name in names(tables)) {
    # a table of a kernel that did not run is left out, not written empty
    if (ncol(tables[[name]]) == 0) next
    fwrite(tables[[name]], file.path(dir, paste0(name, ".csv")))
  }
}

# Each figure with a caption saying what it shows, in which units, and how
# to read it. Files are named by the run's path (unique); titles and
# captions by its label. noise: the run's rows of the summary table, whose
# noisiest units get a panel each (detail.R).
run_figures <- function(dir, name, run, peaks, label, noise, scale = NULL,
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
        "lost, a row per node (", nodes, ", the noisiest on average on top), a column per ",
        "CPU number. A dark row is a bad node, a dark column a CPU bad on every node (an ",
        "interrupt's, a housekeeping thread's); nodes.csv names the outliers."),
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
    iterations <- psnap_iterations(setNames(list(whole_run), name))
    add(plot_psnap_histogram(iterations, paste(label, ": iteration times, all ranks")),
      paste0(name, "-psnap-histogram"), paste0(label, ": how many iterations (y) of the ",
        "calibrated spin took each time (us, 1 us bins), over all ranks. A quiet system is one ",
        "narrow peak at the granularity; iterations to its right lost that much to noise."))
    tails <- iterations[, .(us = stats::quantile(us, 0.99, names = FALSE)), by = host]
    if (nrow(tails) > 1) {
      hosts <- tails$host[detail_positions(tails$us)]
      add(plot_psnap_nodes(iterations[host %in% hosts], paste(label, ": iteration times per node")),
        paste0(name, "-psnap-nodes"), paste0(label, ": P-SNAP iteration times (us) per ",
          "node: a node whose peak sits right of the others', or whose tail is longer, is ",
          "the noisy one (nodes.csv names it).", detail_note(length(hosts), nrow(tails),
            "nodes (by their 99th percentile)", "nodes.csv")),
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
  if (!is.null(scale) && nrow(scale)) {
    add(plot_scale(scale, paste(label, ": predicted slowdown at scale")),
      paste0(name, "-scale"), paste0(label, ": the slowdown (phase time / T, 1 = none) this ",
        "noise would cause a bulk-synchronous application computing T (us or ms) between ",
        "global synchronisations, against the number of processes N (log), one line per T; left ",
        "with each process at its own offset in the trace, right with all at the same ",
        "(co-scheduled). Beyond the trace's windows the prediction stops growing: rarer ",
        "events than the trace holds are not in it."))
  }
  add(plot_heatmap(stretches_against(stretches, whole_run), paste(label,
    ": noise per CPU over time")),
    paste0(name, "-heatmap"), paste0(label, ": the share of time lost to noise (%, colour) ",
      "in 100 equal stretches of the run (s), one row per CPU", if (all_units > detail_units_max)
        ", the noisiest on top", ". Dark cells are stretches that ",
      "lost most; a dark column hit every CPU at once, a dark row is one noisy CPU."),
    height = heatmap_height(all_units))
  figs
}

write_report <- function(results_dir) {
  data <- read_results(results_dir)
  runs <- data$runs
  if (length(runs) == 0) return(write_stream_report(data, results_dir))
  summary <- rbindlist(lapply(names(runs), function(n) noise_summary(runs[[n]], n)))
  verdicts <- host_verdicts(summary)
  peaks <- ftq_peak_table(runs)
  psnap_table <- psnap_runs(runs)
  streams <- data$streams
  labels <- rbind(run_labels(runs),
    rbindlist(lapply(names(streams), function(n) stream_label(n, streams[[n]]))), fill = TRUE)
  # each run's 100 stretches per CPU against the best sample on any host:
  # the yardstick of nodes and cores alike
  stretches <- lapply(runs, noise_over_time, best = "run")
  causes <- cause_shares(runs)
  tables <- list(
    runs = labels,
    summary = summary,
    peaks = if (nrow(peaks$peaks)) {
      peaks$peaks[, .(frequency_hz, power, share_percent, origin, run, host, thread, cpu,
        sampling_hz,
        partner_run, partners, agreeing, above_floor = ratio)]
    } else {
      data.table(frequency_hz = numeric(), power = numeric(), share_percent = numeric(),
        origin = character())
    },
    verdicts = verdicts,
    nodes = node_table(runs, summary, stretches),
    outliers = outlier_table(runs, summary, stretches, causes),
    tails = rbind(tail_table(runs), stream_tail_table(streams), fill = TRUE),
    streams = stream_table(streams),
    scale = scale_table(runs),
    machines = machines_table(runs),
    psnap_runs = psnap_table,
    psnap_cores = psnap_by_cores(psnap_table),
    selfish = selfish_table(runs),
    causes = causes,
    top_causes = top_causes(runs)
  )

  write_report_dir(results_dir, function(tmp) {
    write_tables(tmp, tables)
    dir.create(file.path(tmp, "loggopsim"))
    write_loggopsim_traces(file.path(tmp, "loggopsim"), runs)
    figures <- lapply(names(runs), function(n) {
      run_figures(tmp, n, runs[[n]], peaks, labels[run == n, label], summary[run == n],
        if (nrow(tables$scale)) tables$scale[run == n], stretches[[n]])
    })
    if (nrow(tables$causes)) {
      causes <- tables$causes[detail_rows(summary), on = .(run, host, cpu), nomatch = NULL]
      caption <- paste("Noise by cause: the share (%) of the detours' time each class of",
        "cause held, per run and CPU (of a run of more than", detail_units_max, "CPUs, the",
        detail_units_max - 1, "noisiest and the quietest; causes.csv has every one).",
        "Hardware is what nothing in the kernel's trace explains.")
      figures <- c(list(setNames(save_figure(plot_causes(with_labels(causes, labels),
        "noise by cause"), tmp, "causes",
        height = 1.5 + 0.5 * nrow(unique(causes[, .(run, unit)]))), caption)),
        figures)
    }
    figures <- c(figures, lapply(names(streams), function(n) {
      stream_figures(tmp, n, streams[[n]], labels[run == n, label])
    }))
    writeLines(report_html(data, tables, verdict_text(verdicts), figures, untraced_runs(runs)),
      file.path(tmp, "index.html"))
  })
}

# Writes a report with fill(tmp) into a temporary directory that replaces
# RESULTS_DIR/report only when fill is done: a failure half-way leaves the
# previous report, or none, never half of one.
write_report_dir <- function(results_dir, fill) {
  tmp <- file.path(results_dir, sprintf(".report-%d.tmp", Sys.getpid()))
  unlink(tmp, recursive = TRUE)
  dir.create(tmp)
  done <- FALSE
  on.exit(if (!done) unlink(tmp, recursive = TRUE), add = TRUE)
  fill(tmp)
  out <- file.path(results_dir, "report")
  old <- paste0(tmp, ".old")
  if (dir.exists(out)) file.rename(out, old)
  if (!file.rename(tmp, out)) stop("cannot rename ", tmp, " to ", out)
  unlink(old, recursive = TRUE)
  done <- TRUE
  invisible(file.path(out, "index.html"))
}

# A results directory of streamed runs only: their table, tails and figures.
write_stream_report <- function(data, results_dir) {
  streams <- data$streams
  labels <- rbindlist(lapply(names(streams), function(n) stream_label(n, streams[[n]])))
  tables <- list(runs = labels, streams = stream_table(streams),
    tails = stream_tail_table(streams))
  hosts <- unique(unlist(lapply(streams, function(s) {
    vapply(s$ranks, function(r) r$info$host, "")
  })))
  write_report_dir(results_dir, function(tmp) {
    write_tables(tmp, tables)
    figures <- lapply(names(streams), function(n) {
      stream_figures(tmp, n, streams[[n]], labels[run == n, label])
    })
    body <- c(
      stream_section(tables, labels),
      "<h2>Runs</h2>", html_table(labels[, .(label, run)]),
      "<h2>Figures</h2>",
      unlist(lapply(figures, function(f) mapply(html_figure, f, names(f))))
    )
    writeLines(html_page(paste("noisebench report:", paste(hosts, collapse = ", ")), body),
      file.path(tmp, "index.html"))
  })
}

stream_section <- function(tables, labels) {
  c(
    "<h2>Streamed runs</h2>",
    "<p>Runs of any length in fixed memory (--stream), per rank: samples folded in,",
    "lost_samples (overwritten before the writer read them: it fell behind), seconds",
    "measured and seconds_in_file (whole lines of the per-second file), lost_percent (the",
    "share of the time lost against the best sample of the first second), how many",
    "checkpoints were written and the longest took (ms), the memory the stream held",
    "(MiB, fixed whatever the length). complete: the run ended as asked; otherwise it was",
    "stopped by a signal or killed, and these are its last checkpoint's figures. Its",
    "tails are in the Tails table, from the histogram (1% buckets). Also in streams.csv.</p>",
    html_table(with_labels(tables$streams, labels)),
    html_table(with_labels(tables$tails[run %in% tables$streams$run], labels),
      "Tails of the streamed runs (us; counts per hour)")
  )
}

# The largest p99.9 and maximum loss of each run, over its ranks.
tails_by_run <- function(tails) {
  if (is.null(tails) || nrow(tails) == 0) return(tails)
  tails[, .(ranks = .N, p99_us = max(p99_us), p99_9_us = max(p99_9_us),
    max_us = max(max_us), above_100us_per_hour = max(above_100us_per_hour),
    above_1000us_per_hour = max(above_1000us_per_hour)), by = .(run, kernel)]
}

# What a procurement panel reads first: the machines, a verdict per host,
# the PRACE tables, the tails and the predicted slowdown.
first_screen <- function(data, tables, verdict, labels) {
  hosts <- tables$machines
  scale <- scale_sentences(tables$scale, labels)
  c(
    '<section id="summary">',
    "<h2>Summary</h2>",
    html_table(machine_kinds(hosts[, .(host, cpu, cores, kernel,
      isolcpus = ifelse(nzchar(isolcpus), isolcpus, "none"),
      nohz_full = ifelse(nzchar(nohz_full), nohz_full, "none"), virtual_machine)]),
      "Machines measured (hosts alike in every column are one row)"),
    sprintf('<p class="verdict">%s</p>', html_escape(paste0("Sequoia criteria: ", verdict))),
    verdicts_on_page(tables$verdicts,
      "Verdict per host and work kind (the Sequoia RFP's diminutive noise)"),
    html_table(tables$psnap_cores, paste("P-SNAP, PRACE style, per core count: calibration",
      "time and mean run time (s), their SD across ranks (s), OS noise (%) and the",
      "correlation of each rank's noise with rank 0's")),
    html_table(with_labels(tails_by_run(tables$tails), labels), paste("Tails: the time a",
      "sample lost to noise (us), the worst rank of each run; counts per hour of samples",
      "losing more than 100 us and 1 ms")),
    "<h3>Predicted slowdown at scale</h3>",
    if (length(scale)) {
      paste0("<ul>", paste0("<li>", html_escape(scale), "</li>", collapse = "\n"), "</ul>")
    } else {
      "<p><em>No uninjected FWQ, P-SNAP or selfish run to predict from.</em></p>"
    },
    "<p>A bulk-synchronous model from the measured traces (SC10): see the Scale section.</p>",
    "</section>"
  )
}

# The report's first picture: every core of every run at once (the core
# map of a run over several nodes, the ranking of a run of many CPUs), the
# spread of their noise and tails, and the outliers with why.
whole_system <- function(tables, pictures, labels) {
  c(
    '<section id="whole-system">',
    "<h2>Whole system</h2>",
    unlist(lapply(pictures, function(f) mapply(html_figure, f, names(f)))),
    html_table(page_names(with_labels(system_spread(tables$summary, tables$tails), labels)),
      paste("Every CPU of each run: how many and on how many hosts, the share of its time",
        "each lost (%: median, 99th percentile and largest over the CPUs), the part in",
        "detours and in running slow (median over the CPUs), the 99.9th percentile of a",
        "sample's loss (us) of the median and of the 99th-percentile CPU, and the longest",
        "loss of any")),
    if (nrow(tables$outliers)) {
      html_table(with_labels(tables$outliers, labels), paste(
        "Outliers: the nodes noisier than the other nodes of their run, and the cores noisier",
        "than the other cores of their node (the share of time lost in their typical stretch",
        sprintf("against their peers' stretches, robust z above %.1f), with why.", outlier_z),
        "Also in outliers.csv"))
    } else {
      paste("<p>Outliers: no node stands out from the other nodes of its run, no core from",
        "the other cores of its node.</p>")
    },
    "</section>"
  )
}

# system_spread's columns as the page names them: short, the table fits
page_names <- function(spread) {
  setnames(copy(spread), c("noise_median_percent", "noise_p99_percent", "noise_max_percent",
    "detour_median_percent", "slow_median_percent", "p99_9_us_median", "p99_9_us_p99",
    "max_us"), c("lost % median", "lost % p99", "lost % max", "detours %", "slow %",
    "p99.9 loss us median", "p99.9 loss us p99", "longest loss us"), skip_absent = TRUE)
}

# The figures of the whole-system section, and the others.
is_whole_system <- function(f) grepl("-(core-map|ranking)\\.png$", f)

report_html <- function(data, tables, verdict, figures, untraced = NULL) {
  hosts <- tables$machines
  labels <- tables$runs
  shown <- function(name) with_labels(tables[[name]], labels)
  # a table of CPUs or hosts: the rows of those shown in detail (detail.R)
  on_page <- function(rows, csv, caption = "") {
    t <- page_table(rows, tables$summary, csv)
    caption <- trimws(paste0(caption, t$note))
    html_table(with_labels(t$rows, labels), if (nzchar(caption)) caption)
  }
  pictures <- lapply(figures, function(f) f[is_whole_system(f)])
  figures <- lapply(figures, function(f) f[!is_whole_system(f)])
  body <- c(
    whole_system(tables, pictures, labels),
    first_screen(data, tables, verdict, labels),
    "<h2>Runs</h2>",
    "<p>Each run by what it measured; its directory under the results (the run column of",
    "the CSV tables) beside it. Also in runs.csv.</p>",
    html_table(labels[, .(label, run)]),
    "<h2>Machine</h2>", html_list(machine_description(data)),
    if (nrow(hosts) > 1) {
      html_table(machine_kinds(hosts), "Every kind of host measured (each in machines.csv)")
    },
    "<h2>Tuning findings</h2>",
    "<p>What the kernels found that can explain noise on the measured CPUs (interrupts",
    "delivered to isolated or nohz_full CPUs, irqbalance, nohz_full without NO_HZ_FULL,",
    "transparent huge pages always, SMIs during the run, a governor other than performance).</p>",
    html_table(tuning_findings(setNames(data$runs, labels$label[match(names(data$runs),
      labels$run)]))),
    "<h2>Verdict (Sequoia RFP criteria)</h2>",
    sprintf('<p class="verdict">%s</p>', html_escape(verdict)),
    "<p>Diminutive noise: over every FWQ thread of a host, the largest mean of the scaled noise",
    "(t - min) / min is below 1e-6, its largest standard deviation below 1e-3, and its largest",
    "kurtosis below 100. Per host and work kind; runs with injected noise are left out.",
    "The table is in the summary above and in verdicts.csv.</p>",
    "<h2>Nodes</h2>",
    "<p>Per run and host: noise_percent, the mean over its ranks; typical_percent, the share of",
    "the time lost in the median of its ranks' 100 equal stretches of the run (against the run's",
    "best sample on any host); against the stretches of every other host of",
    "the run, their median and MAD (as a standard deviation), and the robust z-score of the",
    sprintf("typical stretch. <b>outlier</b>: noisier than the other hosts by more than %.1f", outlier_z),
    "(Iglewicz and Hoaglin's cut). inject: the injection its ranks ran with. Also in",
    "nodes.csv.</p>",
    on_page(tables$nodes, "nodes.csv"),
    "<h2>Tails</h2>",
    "<p>How bad the worst case is, per run and rank: the time each sample lost to noise, in us",
    "(FWQ: beyond the fastest sample; P-SNAP: beyond the ideal iteration; FTQ: the quantum's",
    "missing work as time; selfish: each detour beyond the minimal iteration, its percentiles",
    "those of the detours), its 50th to 99.99th percentiles and maximum, and how many samples",
    "per hour of the run lost more than 10 us, 100 us and 1 ms. Also in tails.csv.</p>",
    on_page(tables$tails, "tails.csv"),
    "<h2>Noise per kernel run and thread</h2>",
    "<p>noise_percent: FWQ and P-SNAP iteration times, the share of time not spent on the work,",
    "sum(t - min) / sum(t) (P-SNAP: its own slowdown of the calibrated loop,",
    "(mean - ideal) / ideal, ideal its fastest iteration before or during the run);",
    "FTQ, the share of the best quantum's work missing;",
    "selfish, the time spent in detours. Moments are those of the scaled noise",
    "(FTQ: of (max - count) / max). Also in summary.csv.</p>",
    "<p>Detours or running slow (FWQ, P-SNAP, selfish): detour_percent, the time samples took",
    "beyond the usual sample around them, in samples 5% or more above it; slow_percent, the",
    "time lost where the usual sample itself ran 5% or more above the ideal (a change of speed:",
    "frequency, an SMT sibling, a hypervisor sharing the core), slow_time_percent the time",
    "spent so and slow_factor how much slower (selfish: the ordinary iterations' average, its",
    "time unknown); steal_ms, the steal time /proc/stat gave the CPU over the run.</p>",
    on_page(tables$summary[, .(run, kernel, work, sampling_hz, inject, host, thread, cpu,
      samples, scaled_noise_mean, scaled_noise_sd, kurtosis, skewness, noise_percent,
      diminutive, detour_percent, slow_percent, slow_time_percent, slow_factor, steal_ms)],
      "summary.csv"),
    "<h2>FTQ peaks</h2>",
    "<p>The strongest lines of each FTQ spectrum (power: the variance of the counts at that",
    "frequency, in counts squared; above_floor: times the running median of the spectrum;",
    "share_percent: the share of the time a short detour repeating at that frequency takes,",
    "were the line one; its harmonics show the same share, so count the lowest line only).",
    "origin: <b>external</b> when runs at an independent sampling frequency show the same Hz,",
    "<b>artifact</b> of the benchmark when they show the line moved with the sampling rate (a",
    "fixed number of quanta apart), <b>unknown</b> when they tie or without a partner; each",
    "of up to 5 such runs (partners, the nearest in time first: partner_run) votes, agreeing",
    "of them gave the origin.",
    "Also in peaks.csv.</p>",
    on_page(tables$peaks, "peaks.csv"),
    "<h2>P-SNAP</h2>",
    html_table(shown("psnap_runs"), "Per run (as a PRACE Tier-0 assessment)"),
    html_table(tables$psnap_cores, "Per core count"),
    "<h2>Selfish detour</h2>",
    on_page(tables$selfish, "selfish.csv"),
    "<h2>Noise by cause</h2>",
    "<p>Runs with --trace: each detour joined to what the kernel's trace saw on its CPU",
    "(interrupts, softirqs, timers, IPIs, NMIs, other threads, the run's own injections);",
    "<b>hardware</b> is the time lost that nothing in the kernel explains (the hypervisor,",
    "an SMI, a slower clock): the share left unexplained. share_percent: of all the time",
    "attributed on that CPU. Also in causes.csv and top_causes.csv; per detour in each",
    "run's *_causes.dat.</p>",
    if (!is.null(untraced) && nrow(untraced)) {
      html_table(untraced, "Runs asked to trace that could not")
    },
    on_page(tables$top_causes, "top_causes.csv", "The causes that took most, per run and CPU."),
    if (nrow(tables$streams)) stream_section(tables, labels),
    scale_section(tables$scale, labels),
    "<h2>Figures</h2>",
    unlist(lapply(figures, function(f) mapply(html_figure, f, names(f))))
  )
  html_page(paste("noisebench report:", hosts_text(hosts$host),
    format(file.mtime(data$runs[[1]]$path), "%Y-%m-%d")), body)
}

scale_section <- function(scale, labels) {
  c(
    "<h2>Scale: predicted slowdown of a bulk-synchronous application</h2>",
    "<p>From each run's noise trace (selfish: its detours beyond the minimal iteration;",
    "FWQ and P-SNAP: each sample's time beyond the undisturbed one, at the time it began), the",
    "slowdown of an application that computes for T, then synchronises all N processes:",
    "phase time T plus the largest noise any process met in its window, over T. uncoordinated:",
    "each process at its own random offset in the traces; co-scheduled: all at one offset.",
    "phases_hit_percent: the share of phases in which some process met noise. Phases longer",
    "than a tenth of the trace are left out. Where that model does not hold (model_holds:",
    "a detour longer than T, or more than one process in a detour at a time on average), the",
    "slowdown is noise-simulate's event-by-event replay of the traces (source, with its",
    "standard error simulated_se; model_slowdown is the model's figure everywhere). The",
    "model, the simulation and their assumptions: docs/analysis.md.",
    "Each rank's trace is also in loggopsim/, in LogGOPSim's --noise-trace format.",
    "Also in scale.csv.</p>",
    if (!is.null(scale) && nrow(scale)) {
      html_table(with_labels(scale[processes %in% c(1, 100, 10000, 100000) &
        phase_us %in% c(100, 1000, 10000)], labels))
    } else {
      "<p><em>none</em></p>"
    }
  )
}
