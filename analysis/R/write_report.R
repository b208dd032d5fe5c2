# RESULTS_DIR/report/: index.html, the figures as PNG and the tables as CSV.
# Everything is read and checked first and written into a temporary
# directory that replaces report/ only when complete: a bad input file or a
# failure half-way leaves the previous report, or none, never half of one.

write_tables <- function(dir, tables) {
  for (name in names(tables)) {
    # a table of a kernel that did not run is left out, not written empty
    if (ncol(tables[[name]]) == 0) next
    fwrite(tables[[name]], file.path(dir, paste0(name, ".csv")))
  }
}

# hosts: a regular expression; a report of the ranks on the hosts matching
# it only (a group of a survey too large for one report), into out
# (default RESULTS_DIR/report-<hosts, its other characters as _>).
write_report <- function(results_dir, hosts = NULL, out = NULL) {
  out <- out %||% file.path(results_dir, if (is.null(hosts)) "report" else {
    paste0("report-", gsub("[^A-Za-z0-9.-]+", "_", hosts))
  })
  data <- read_results(results_dir, samples = "when_used", hosts = hosts)
  runs <- data$runs
  if (length(runs) == 0) return(write_stream_report(data, out))
  # the slowdown at scale, the slowest table, computed beside the others and
  # the figures
  scale_rows <- start_scale_table(runs)
  # a failure below waits for the model's workers too: none outlives the
  # report, writing into a directory removed
  on.exit(try(scale_rows(), silent = TRUE), add = TRUE)
  summary <- rbindlist(lapply(names(runs), function(n) noise_summary(runs[[n]], n)))
  verdicts <- host_verdicts(summary)
  peaks <- ftq_peak_table(runs, spectrum_threads(runs, summary))
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
    lines = machine_lines(runs),
    verdicts = verdicts,
    nodes = node_table(runs, summary, stretches),
    outliers = outlier_table(runs, summary, stretches, causes),
    tails = rbind(tail_table(runs), stream_tail_table(streams), fill = TRUE),
    streams = stream_table(streams),
    machines = machines_table(runs),
    psnap_runs = psnap_table,
    psnap_cores = psnap_by_cores(psnap_table),
    selfish = selfish_table(runs),
    causes = causes,
    top_causes = top_causes(runs),
    loss_by_length = loss_by_length(runs)
  )

  write_report_dir(out, function(tmp) {
    dir.create(file.path(tmp, "loggopsim"))
    write_loggopsim_traces(file.path(tmp, "loggopsim"), runs)
    figures <- lapply(names(runs), function(n) {
      run_figures(tmp, n, runs[[n]], peaks, labels[run == n, label], summary[run == n],
        stretches[[n]])
    })
    tables$scale <- scale_rows()
    write_tables(tmp, tables)
    figures <- Map(function(f, n) {
      c(f, scale_figure(tmp, n, if (nrow(tables$scale)) tables$scale[run == n],
        labels[run == n, label]))
    }, figures, names(runs))
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
    if (nrow(tables$loss_by_length)) {
      lengths <- with_labels(tables$loss_by_length, labels)
      caption <- paste("Where the time went, by how long each loss was: the share of the",
        "CPU time (%) lost in samples whose loss fell in each bucket (selfish: its detours),",
        "every CPU of each run summed by the kernels themselves, a bar per run. Many short",
        "losses (interrupts, timer ticks) sit at the left, rare long ones (daemons, stalls)",
        "at the right. loss_by_length.csv adds how many a core-hour.")
      figures <- c(list(setNames(save_figure(plot_loss_by_length(lengths,
        "time lost by the length of the loss"), tmp, "loss-by-length",
        height = loss_by_length_height(lengths)), caption)), figures)
    }
    figures <- c(figures, lapply(names(streams), function(n) {
      stream_figures(tmp, n, streams[[n]], labels[run == n, label])
    }))
    writeLines(report_html(data, tables, verdict_text(verdicts), figures, untraced_runs(runs)),
      file.path(tmp, "index.html"))
  })
}

# Writes a report with fill(tmp) into a temporary directory that replaces
# out (RESULTS_DIR/report) only when fill is done: a failure half-way leaves
# the previous report, or none, never half of one.
write_report_dir <- function(out, fill) {
  tmp <- file.path(dirname(out), sprintf(".%s-%d.tmp", basename(out), Sys.getpid()))
  unlink(tmp, recursive = TRUE)
  dir.create(tmp)
  done <- FALSE
  on.exit(if (!done) unlink(tmp, recursive = TRUE), add = TRUE)
  fill(tmp)
  old <- paste0(tmp, ".old")
  if (dir.exists(out)) file.rename(out, old)
  if (!file.rename(tmp, out)) stop("cannot rename ", tmp, " to ", out)
  unlink(old, recursive = TRUE)
  done <- TRUE
  invisible(file.path(out, "index.html"))
}

# A results directory of streamed runs only: their table, tails and figures.
write_stream_report <- function(data, out) {
  streams <- data$streams
  labels <- rbindlist(lapply(names(streams), function(n) stream_label(n, streams[[n]])))
  tables <- list(runs = labels, streams = stream_table(streams),
    tails = stream_tail_table(streams))
  hosts <- unique(unlist(lapply(streams, function(s) {
    vapply(s$ranks, function(r) r$info$host, "")
  })))
  write_report_dir(out, function(tmp) {
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
