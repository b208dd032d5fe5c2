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

run_figures <- function(dir, name, run, peaks) {
  figs <- character()
  add <- function(plot, file, caption, height = 5) {
    figs[[caption]] <<- save_figure(plot, dir, file, height = height)
  }
  n_units <- length(run$threads)
  if (run$kernel %in% c("fwq", "psnap")) {
    ns <- noise_samples(run)
    # scaled noise below one timer read over the best sample is not resolved;
    # FWQ samples are in ticks, P-SNAP iterations in ns
    resolution_ns <- run$meta$calibration$timer_resolution_ns
    unit_per_ns <- if (run$kernel == "fwq") run$threads[[1]]$ticks_per_ns else 1
    resolution <- resolution_ns * unit_per_ns / max(ns[, min(value), by = unit]$V1)
    add(plot_noise_histogram(ns, resolution, paste(name, "scaled noise per thread")),
      paste0(name, "-histogram"), paste(name, ": histogram of the scaled noise"))
    add(plot_noise_series(ns, resolution, paste(name, "scaled noise over time")),
      paste0(name, "-series"), paste(name, ": scaled noise over time"),
      height = 1.5 + 1.5 * n_units)
  }
  if (run$kernel == "ftq") {
    spectra <- peaks$spectra[run == name]
    add(plot_spectrum(spectra, peaks$peaks[run == name], paste(name, "spectrum of the counts")),
      paste0(name, "-spectrum"), paste(name, ": spectrum of the FTQ counts, peaks by origin"),
      height = 1.5 + 2 * n_units)
  }
  if (run$kernel == "psnap") {
    iterations <- psnap_iterations(setNames(list(run), name))
    add(plot_psnap_histogram(iterations, paste(name, "iteration times, all ranks")),
      paste0(name, "-psnap-histogram"), paste(name, ": P-SNAP iteration times over all ranks"))
    hosts <- uniqueN(iterations$host)
    if (hosts > 1) {
      add(plot_psnap_nodes(iterations, paste(name, "iteration times per node")),
        paste0(name, "-psnap-nodes"), paste(name, ": P-SNAP iteration times per node"),
        height = 1.5 + 1.5 * hosts)
    }
  }
  if (run$kernel == "selfish" && sum(vapply(run$threads, function(t) nrow(t$data), 0)) > 0) {
    detours <- selfish_detours(setNames(list(run), name))
    add(plot_detour_histogram(detours, paste(name, "detour lengths")),
      paste0(name, "-detour-histogram"), paste(name, ": selfish detour lengths"))
    add(plot_detour_timeline(detours, paste(name, "detours over time")),
      paste0(name, "-detour-timeline"), paste(name, ": selfish detours over time"),
      height = 1.5 + 1.5 * n_units)
  }
  add(plot_heatmap(noise_over_time(run), paste(name, "noise per core over time")),
    paste0(name, "-heatmap"), paste(name, ": noise per core over time (100 bins)"),
    height = 1.5 + 0.4 * n_units)
  figs
}

write_report <- function(results_dir) {
  data <- read_results(results_dir)
  runs <- data$runs
  summary <- rbindlist(lapply(names(runs), function(n) noise_summary(runs[[n]], n)))
  verdicts <- host_verdicts(summary)
  peaks <- ftq_peak_table(runs)
  psnap_table <- psnap_runs(runs)
  tables <- list(
    summary = summary,
    peaks = if (nrow(peaks$peaks)) {
      peaks$peaks[, .(frequency_hz, power, share_percent, origin, run, host, thread, cpu,
        sampling_hz,
        partner_run, above_floor = ratio)]
    } else {
      data.table(frequency_hz = numeric(), power = numeric(), share_percent = numeric(),
        origin = character())
    },
    verdicts = verdicts,
    nodes = node_table(runs, summary),
    tails = tail_table(runs),
    machines = machines_table(runs),
    psnap_runs = psnap_table,
    psnap_cores = psnap_by_cores(psnap_table),
    selfish = selfish_table(runs),
    causes = cause_shares(runs),
    top_causes = top_causes(runs)
  )

  out <- file.path(results_dir, "report")
  tmp <- file.path(results_dir, sprintf(".report-%d.tmp", Sys.getpid()))
  unlink(tmp, recursive = TRUE)
  dir.create(tmp)
  done <- FALSE
  on.exit(if (!done) unlink(tmp, recursive = TRUE), add = TRUE)

  write_tables(tmp, tables)
  figures <- lapply(names(runs), function(n) run_figures(tmp, n, runs[[n]], peaks))
  if (nrow(tables$causes)) {
    caption <- "noise by cause: the share of the detours' time each class held, per CPU"
    figures <- c(list(setNames(save_figure(plot_causes(tables$causes, "noise by cause"), tmp,
      "causes", height = 1.5 + 0.5 * nrow(unique(tables$causes[, .(run, unit)]))), caption)),
      figures)
  }
  writeLines(report_html(data, tables, verdict_text(verdicts), figures, untraced_runs(runs)),
    file.path(tmp, "index.html"))

  old <- paste0(tmp, ".old")
  if (dir.exists(out)) file.rename(out, old)
  if (!file.rename(tmp, out)) stop("cannot rename ", tmp, " to ", out)
  unlink(old, recursive = TRUE)
  done <- TRUE
  invisible(file.path(out, "index.html"))
}

report_html <- function(data, tables, verdict, figures, untraced = NULL) {
  hosts <- tables$machines
  s <- tables$summary
  body <- c(
    "<h2>Machine</h2>", html_list(machine_description(data)),
    if (nrow(hosts) > 1) html_table(hosts, "Every host measured (also in machines.csv)"),
    "<h2>Tuning findings</h2>",
    "<p>What the kernels found that can explain noise on the measured CPUs (interrupts",
    "delivered to isolated or nohz_full CPUs, irqbalance, nohz_full without NO_HZ_FULL,",
    "transparent huge pages always, SMIs during the run, a governor other than performance).</p>",
    html_table(tuning_findings(data$runs)),
    "<h2>Verdict (Sequoia RFP criteria)</h2>",
    sprintf('<p class="verdict">%s</p>', html_escape(verdict)),
    "<p>Diminutive noise: over every FWQ thread of a host, the largest mean of the scaled noise",
    "(t - min) / min is below 1e-6, its largest standard deviation below 1e-3, and its largest",
    "kurtosis below 100. Per host and work kind; runs with injected noise are left out.",
    "Also in verdicts.csv.</p>",
    html_table(tables$verdicts),
    "<h2>Nodes</h2>",
    "<p>Per run and host: noise_percent, the mean over its ranks; typical_percent, the share of",
    "the time lost in the median of its ranks' 100 equal stretches of the run (against the run's",
    "best sample on any host); against the stretches of every other host of",
    "the run, their median and MAD (as a standard deviation), and the robust z-score of the",
    sprintf("typical stretch. <b>outlier</b>: noisier than the other hosts by more than %.1f", outlier_z),
    "(Iglewicz and Hoaglin's cut). inject: the injection its ranks ran with. Also in",
    "nodes.csv.</p>",
    html_table(tables$nodes),
    "<h2>Tails</h2>",
    "<p>How bad the worst case is, per run and rank: the time each sample lost to noise, in us",
    "(FWQ: beyond the fastest sample; P-SNAP: beyond the ideal iteration; FTQ: the quantum's",
    "missing work as time; selfish: each detour beyond the minimal iteration, its percentiles",
    "those of the detours), its 50th to 99.99th percentiles and maximum, and how many samples",
    "per hour of the run lost more than 10 us, 100 us and 1 ms. Also in tails.csv.</p>",
    html_table(tables$tails),
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
    html_table(s[, .(run, kernel, work, sampling_hz, inject, host, thread, cpu, samples,
      scaled_noise_mean, scaled_noise_sd, kurtosis, skewness, noise_percent, diminutive,
      detour_percent, slow_percent, slow_time_percent, slow_factor, steal_ms)]),
    "<h2>FTQ peaks</h2>",
    "<p>The strongest lines of each FTQ spectrum (power: the variance of the counts at that",
    "frequency, in counts squared; above_floor: times the running median of the spectrum;",
    "share_percent: the share of the time a short detour repeating at that frequency takes,",
    "were the line one; its harmonics show the same share, so count the lowest line only).",
    "origin: <b>external</b> when a run at an independent sampling frequency (partner_run) shows",
    "the same Hz, <b>artifact</b> of the benchmark when it shows the line moved with the sampling",
    "rate (a fixed number of quanta apart), <b>unknown</b> otherwise or without a partner.",
    "Also in peaks.csv.</p>",
    html_table(tables$peaks),
    "<h2>P-SNAP</h2>",
    html_table(tables$psnap_runs, "Per run (as a PRACE Tier-0 assessment)"),
    html_table(tables$psnap_cores, "Per core count"),
    "<h2>Selfish detour</h2>",
    html_table(tables$selfish),
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
    html_table(tables$top_causes, "The causes that took most, per run and CPU"),
    "<h2>Figures</h2>",
    unlist(lapply(figures, function(f) mapply(html_figure, f, names(f))))
  )
  html_page(paste("noisebench report:", basename(normalizePath(data$dir))), body)
}
