# The report's page, index.html, in the order a procurement panel reads it:
# the verdict in words beside one picture, the key figures, what removes
# the noise; then the evidence, every table at most eight columns (the CSV
# files hold every column and row) and every number as format.R writes it.

report_html <- function(data, tables, verdict, first_screen, plots, untraced = NULL,
                        pdf_line = NULL, gaps = NULL) {
  hosts <- tables$machines
  labels <- page_labels(tables$runs)
  shown <- function(dt) with_labels(dt, labels)
  # a table of CPUs or hosts: every row up to page_rows_max (searchable),
  # beyond that the rows of those shown in detail (detail.R)
  on_page <- function(rows, csv, columns, caption = "", noisiest = NULL) {
    if (!is.null(noisiest) && !is.null(rows) && nrow(rows)) {
      rows <- rows[order(match(run, unique(run)), -get(noisiest))]
    }
    rows <- if (!is.null(rows) && nrow(rows) > page_rows_max) {
      t <- page_table(rows, tables$summary, csv)
      caption <- trimws(paste0(caption, t$note))
      t$rows
    } else rows
    html_table(pick(shown(rows), columns), if (nzchar(caption)) caption, csv)
  }
  # the kernels' own tables (the catalogue's), in the section each names
  kernel_tables_on_page <- function(section) {
    unlist(lapply(Filter(function(t) identical(t$section %||% "details", section),
      kernel_tables()), function(t) {
      on_page(tables[[t$name]], paste0(t$name, ".csv"), unlist(t$columns), t$title,
        noisiest = t$noisiest)
    }))
  }
  machine <- machine_description(data)
  pictures <- plots[is_whole_system(plots)]
  plots <- plots[!is_whole_system(plots)]
  body <- c(
    html_section("verdict", "Verdict", first_screen,
      html_table(key_figures(tables, labels), paste("Each run's key figures: what the system",
        "took of the median CPU, its work's own variation and all it lost, the 99.9th",
        "percentile of a sample's loss (median CPU), the longest loss, and how many losses of",
        "over 100 \u00b5s a CPU-hour"), "summary.csv")),
    advice_section(tables$advice, data$runs),
    html_section("whole-system", "Whole system",
      unlist(Map(html_plot, pictures, names(pictures))),
      html_table(pick(shown(system_spread(tables$summary, tables$tails)), c("run", "cpus",
        "stolen_median_percent", "stolen_max_percent", "slowdown_median_percent",
        "variation_median_percent", "max_us")),
        paste("Every CPU of each run: what the system took of the median CPU and of the worst,",
          "the work's own slowdown and variation on the median CPU, and the longest loss")),
      if (nrow(tables$outliers)) {
        on_page(tables$outliers, "outliers.csv", c("run", "scope",
          if (any(!is.na(tables$outliers$location))) "location", "host", "cpu",
          "noise_percent", "robust_z", "why"), paste("Outliers: the cabinets and chassis (where",
          "known) and the nodes noisier than the others of their level in their run, and the",
          "cores noisier than the other cores of their node (robust z above",
          sprintf("%.1f), with why; the largest units first, a unit's nodes and cores not",
            outlier_z), "repeated."))
      } else {
        "<p>Outliers: no node stands out from the other nodes of its run, no core from the other cores of its node.</p>"
      }),
    html_section("summary", "Evidence",
      sprintf('<p class="verdict">%s</p>', html_escape(paste0("Requirements: ", verdict))),
      verdicts_on_page(tables$verdicts, sprintf("Verdict per host, kernel and work kind, by %s",
        requirements_words(tables$requirements))),
      kernel_tables_on_page("evidence"),
      html_table(pick(shown(tails_by_run(tables$tails)), c("run", "ranks", "p99_us", "p99_9_us",
        "max_us", "above_100us_per_hour", "above_1000us_per_hour")),
        "Tails: the time a sample lost to noise, the worst rank of each run", "tails.csv"),
      html_table(pick(shown(tables$roles), c("run", "role", "cpus", "noise_median_percent",
        "noise_max_percent", "p99_9_us_median")), paste("Housekeeping and application CPUs",
        "(--housekeeping): does the system's noise stay on the reserved CPUs?"), "roles.csv"),
      html_table(scale_on_page(tables$scale, labels),
        "Predicted slowdown of a bulk-synchronous application, 1 ms phases", "scale.csv")),
    html_section("machine", "Machine",
      html_list(machine[names(machine) != "kernel command line"]),
      sprintf("<details><summary>Kernel command line</summary><code>%s</code></details>",
        html_escape(data$runs[[1]]$meta$machine$kernel_cmdline %||% "")),
      if (nrow(hosts) > 1) {
        html_table(pick(machine_kinds(hosts), c("host", "hosts", "cpu", "cpus_online", "kernel",
          "isolcpus", "nohz_full", "virtual_machine")), "Every kind of host measured",
          "machines.csv")
      },
      html_table(tuning_findings(setNames(data$runs, labels$label[match(names(data$runs),
        labels$run)])), paste("What the kernels found that can explain noise on the",
        "measured CPUs")),
      html_table(labels[, .(label, directory = run)],
        "Runs, by what they measured, and their directories", "runs.csv")),
    html_section("details", "Details",
      on_page(tables$nodes, "nodes.csv", c("run", "host", "ranks", "inject", "noise_percent",
        "typical_percent", "robust_z", "outlier"), noisiest = "noise_percent",
        caption = paste("Nodes, the noisiest first: the share of each host's time the",
        "system took, its typical stretch's loss against the other hosts' (robust z);",
        "outlier: noisier",
        sprintf("than the others by more than %.1f.", outlier_z))),
      on_page(tables$summary, "summary.csv", c("run", "host", "cpu", "samples",
        "stolen_percent", "slowdown_percent", "resolution_us", "kurtosis"), paste("Noise per run",
        "and CPU: what the system took, the work's own slowdown, the probe's resolution, and",
        "the kurtosis of the scaled noise, the noisiest CPUs of each run first"),
        noisiest = "noise_percent"),
      on_page(tables$tails, "tails.csv", c("run", "host", "cpu", "p99_us", "p99_9_us",
        "p99_99_us", "max_us", "above_100us_per_hour"),
        "Tails per run and CPU, the longest p99.9 of each run first", noisiest = "p99_9_us"),
      on_page(tables$peaks, "peaks.csv", c("run", "host", "cpu", "frequency_hz",
        "share_percent", "origin", "above_floor"), paste(paste0(kernel_labels(fixed_time),
        ": the strongest lines of each"), "spectrum; origin external when a run at another sampling frequency shows the same",
        "Hz, artifact when the line moved with the sampling")),
      if (nrow(tables$lines)) {
        html_table(pick(shown(tables$lines[, utils::head(.SD, machine_lines_shown), by = run]),
          c("run", "frequency_hz", "cpus", "hosts", "share_percent_median", "worst",
            "origin")), "The lines of every CPU, the most common of each run", "lines.csv")
      },
      kernel_tables_on_page("details"),
      if (!is.null(untraced) && nrow(untraced)) {
        html_table(shown(untraced), "Runs asked to trace that could not")
      },
      if (!is.null(gaps) && nrow(gaps)) {
        html_table(shown(gaps), paste("Traces that dropped events: the losses' time they",
          "covered is unseen, nobody can say what took it (a larger NOISEBENCH_TRACE_BUFFER_KB",
          "keeps them)"))
      },
      on_page(tables$top_causes, "top_causes.csv", c("run", "host", "cpu", "class", "name",
        "detours", "total_us", "share_percent"), "The causes that took most, per run and CPU")),
    if (nrow(tables$streams)) stream_section(tables, labels),
    html_section("plots", "Plots", unlist(Map(html_plot, plots, names(plots))))
  )
  subtitle <- paste0(html_escape(report_version(data)), if (length(pdf_line)) " \u00b7 ",
    pdf_line)
  html_page(paste("noisebench report:", hosts_text(hosts$host)), body, subtitle)
}

# Tables of more rows than this show the rows of the CPUs in detail only.
page_rows_max <- 10000

# The columns of a table the page shows, those it has, in this order.
pick <- function(dt, columns) {
  if (is.null(dt) || nrow(dt) == 0) return(dt)
  dt[, intersect(columns, names(dt)), with = FALSE]
}

# Labels without what every run shares: " on HOST" when all ran on one.
page_labels <- function(labels) {
  out <- copy(labels)
  if (nrow(out) && "hosts" %in% names(out) && uniqueN(out$hosts) == 1) {
    out[, label := sub(paste0(" on ", hosts[1]), "", label, fixed = TRUE)]
  }
  out
}

# "noisebench 1.0.0 (commit dae9a52); measured 2026-11-28; report made
# 2026-11-28 10:00 UTC": what an acceptance record cites.
report_version <- function(data) {
  meta <- data$runs[[1]]$meta
  sprintf("noisebench %s (commit %s); measured %s; report made %s",
    meta$noisebench_version %||% utils::packageVersion("noisebench"),
    meta$tuning$noisebench_commit %||% "unknown",
    format(file.mtime(data$runs[[1]]$path), "%Y-%m-%d"),
    format(Sys.time(), "%Y-%m-%d %H:%M %Z"))
}

# One row per run: what decides, at most eight columns.
key_figures <- function(tables, labels) {
  s <- system_spread(tables$summary, tables$tails)
  if (!is.null(tables$tails) && nrow(tables$tails)) {
    per_hour <- tables$tails[, .(above_100us_per_hour = median_cpu(above_100us_per_hour)),
      by = run]
    s <- per_hour[s, on = "run"]
  }
  pick(with_labels(s, labels), c("run", "cpus", "stolen_median_percent",
    "variation_median_percent", "lost_median_percent", "p99_9_us_median", "max_us",
    "above_100us_per_hour"))
}

# The plots of the whole-system section, and the others.
is_whole_system <- function(f) grepl("-(machine-map|core-map|ranking)\\.png$", f)

# What removes each cause the trace named; without a trace, every rule
# with this machine's settings, so the section still says where to look.
advice_section <- function(advice, runs) {
  intro <- paste("What moves each cause of the measured noise off the application's CPUs",
    "(the kernel parameter or the run-time knob), this machine's setting of it now, and the",
    "kernel documentation it comes from. Where a cause can be moved on the running machine,",
    "the action column gives the command (HOUSEKEEPING: the CPUs the run names with",
    "--housekeeping, else those it did not measure).")
  if (is.null(advice) || nrow(advice) == 0) {
    settings <- current_settings(runs[[1]], runs)
    rules <- advice_rules()
    rows <- rbindlist(lapply(rules, function(r) {
      keys <- unlist(r$settings)
      data.table(class = r$class, knob = r$knob, docs = r$docs,
        setting = paste(setting_words(keys, settings[keys]), collapse = "; "))
    }))[class != "injection"][, .SD[1], by = class]
    rows[, knob := paste0(knob, " See ", docs, ".")]
    return(html_section("advice", "What removes it", sprintf("<p>%s</p>", intro),
      "<p>No run was traced (run the kernels with --trace as root): the causes are not named. What moves each class of cause, and this machine's settings:</p>",
      html_table(rows[, .(class, knob, setting)])))
  }
  html_section("advice", "What removes it", sprintf("<p>%s</p>", intro),
    html_table(advice[, .(class, name, share_of_detours_percent, cpus_affected,
      knob = paste0(knob, " See ", docs, "."), setting, action)],
      "The causes the trace named, the largest share first", "advice.csv"))
}

scale_on_page <- function(scale, labels) {
  if (is.null(scale) || nrow(scale) == 0) return(NULL)
  s <- scale[!injected & phase_us == 1000 & processes %in% c(100, 10000)]
  pick(with_labels(s, labels), c("run", "mode", "processes", "slowdown",
    "phases_hit_percent", "source"))
}

stream_section <- function(tables, labels) {
  html_section("streams", "Streamed runs", html_table(pick(with_labels(tables$streams, labels), c("run", "host", "cpu", "stopped_by",
    "seconds", "stolen_percent", "stolen_ci95_low", "stolen_ci95_high")), paste("Streamed runs (--stream):",
    "fixed memory whatever the length; stopped by its seconds, its interval (--until-ci), a",
    "signal, or killed (then these are its last checkpoint's figures)"), "streams.csv"),
    html_table(pick(with_labels(tables$tails[run %in% tables$streams$run], labels), c("run",
      "host", "cpu", "p99_us", "p99_9_us", "max_us", "above_100us_per_hour",
      "above_1000us_per_hour")), "Tails of the streamed runs", "tails.csv"))
}

# The largest p99.9 and maximum loss of each run, over its ranks.
tails_by_run <- function(tails) {
  if (is.null(tails) || nrow(tails) == 0) return(tails)
  tails[, .(ranks = .N, p99_us = max(p99_us), p99_9_us = max(p99_9_us),
    max_us = max(max_us), above_100us_per_hour = max(above_100us_per_hour),
    above_1000us_per_hour = max(above_1000us_per_hour)), by = .(run, kernel)]
}

# The verdicts on the page: those not met first, at most detail_units_max
# rows, the caption saying how many of how many.
verdicts_on_page <- function(verdicts, caption) {
  shown <- utils::head(verdicts[order(meets)], detail_units_max)
  if (nrow(shown) < nrow(verdicts)) {
    caption <- sprintf("%s; the %d of %d rows not met first", caption, nrow(shown),
      nrow(verdicts))
  }
  shown <- shown[, .(host, kernel = vapply(kernel, kernel_label, ""), work, threads, verdict)]
  html_table(shown, caption, "verdicts.csv")
}
