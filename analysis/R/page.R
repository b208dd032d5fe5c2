# The report's page, index.html: its sections in order, the first screen
# and the whole system first, each table capped to what a page can show
# (the CSV files hold every row).

stream_section <- function(tables, labels) {
  c(
    "<h2>Streamed runs</h2>",
    "<p>Runs of any length in fixed memory (--stream), per rank: samples folded in,",
    "lost_samples (overwritten before the writer read them: it fell behind), seconds",
    "measured, lost_percent (the share of the time lost against the best sample of the",
    "first second), how many",
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
    "of them gave the origin. Of a run of more than", detail_units_max, "CPUs, the spectra",
    "are those of the CPUs shown in detail and of their partners in the other FTQ runs.",
    "Also in peaks.csv.</p>",
    on_page(tables$peaks, "peaks.csv"),
    if (nrow(tables$lines)) {
      html_table(with_labels(tables$lines[, utils::head(.SD, machine_lines_shown), by = run],
        labels), paste("The lines of every CPU: each FTQ CPU's own strongest lines (up to 20,",
        "found by the kernel as above), those of many CPUs at the same frequency counted",
        "together: cpus (and cpus_percent of the run's) and hosts that have it, its",
        "share_percent over them (median and largest) and worst, the host:cpu of the",
        "largest; origin, the two-frequency test as above on these lines. A line on every CPU",
        "is the system's (a tick, a housekeeping thread); one on a few hosts is theirs. The",
        machine_lines_shown, "most common of each run;",
        "every one in lines.csv."))
    },
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
