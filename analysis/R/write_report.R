# RESULTS_DIR/report/: index.html, the plots as PNG and the tables as CSV.
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

#' The report of a noise survey, or of two compared
#'
#' \code{write_report} reads every kernel run under a results directory and
#' writes \code{RESULTS_DIR/report/}: \file{index.html}, \file{report.pdf}, its plots and the CSV
#' tables the page is made of (docs/analysis.md says what each holds).
#' \code{write_comparison} sets two results directories side by side (two
#' systems, or before and after a tuning).
#' \code{write_pdf} prints a report made without Chromium to its PDF.
#'
#' @param results_dir a directory holding kernel runs (each a JSON description and its data files),
#'   at any depth.
#' @param hosts a regular expression: the report of the ranks on the hosts whose names match it
#'   only (a group of nodes of a survey too large for one report); \code{NULL}, every rank.
#' @param machine_cpus the processes the first screen predicts the slowdown at (the whole machine's
#'   CPUs); \code{NULL}, the CPUs the survey measured.
#' @param locations,topology where the nodes sit (a site's CSV file of host and levels, or
#'   Slurm's \file{topology.conf}; \code{\link{node_locations}}): the outliers and the machine
#'   map by those levels; \code{NULL}, HPE Cray xnames (\file{/etc/cray/xname}, or the host
#'   names) where there are.
#' @param pdf also \file{report.pdf}, printed by headless Chromium where it is installed (else a
#'   line says how to make it).
#' @param dir_a,dir_b the two results directories.
#' @param out where the report goes (by default \file{report/} in \code{results_dir}, with
#'   \code{hosts} \file{report-<hosts>/}, its characters other than letters, digits, \code{.} and
#'   \code{-} as \code{_}); where the comparison goes (by default \file{report-vs-<name of A>/} in
#'   \code{dir_b}).
#' @return The path of the page written.
#' @seealso The command line \file{analysis/inst/report.R}.
#' @order 1
#' @export
write_report <- function(results_dir, hosts = NULL, out = NULL, machine_cpus = NULL,
                         pdf = TRUE, locations = NULL, topology = NULL) {
  out <- out %||% file.path(results_dir, if (is.null(hosts)) "report" else {
    paste0("report-", gsub("[^A-Za-z0-9.-]+", "_", hosts))
  })
  data <- read_results(results_dir, samples = "when_used", hosts = hosts)
  runs <- data$runs
  if (length(runs) == 0) return(write_stream_report(data, out, pdf))
  summary <- with_roles(rbindlist(lapply(names(runs), function(n) noise_summary(runs[[n]], n))),
    runs)
  places <- node_locations(summary$host, locations, topology, machine_xnames(runs))
  machines <- machines_table(runs)
  systems <- host_systems(machines)
  processes <- machine_processes(summary, machine_cpus)
  # the slowdown at scale, the slowest table, computed beside the others and
  # the plots; simulated where the model does not hold for the runs the
  # first screen quotes only
  quoted <- quoted_scale_runs(summary, systems)
  scale_rows <- start_scale_table(runs, simulate = quoted, processes = processes)
  # a failure below waits for the model's workers too: none outlives the
  # report, writing into a directory removed
  on.exit(try(scale_rows(), silent = TRUE), add = TRUE)
  verdicts <- host_verdicts(summary)
  peaks <- peak_table(runs, spectrum_threads(runs, summary))
  streams <- data$streams
  labels <- rbind(run_labels(runs),
    rbindlist(lapply(names(streams), function(n) stream_label(n, streams[[n]]))), fill = TRUE)
  # each run's 100 stretches per CPU against the best sample on any host:
  # the yardstick of nodes and cores alike
  # (and the heat map's tiles, its rows in the order of the ranks' noise)
  yardsticks <- lapply(setNames(nm = names(runs)), function(n) {
    s <- summary[run == n]
    stretch_yardsticks(runs[[n]], s$noise_percent[match(thread_values(runs[[n]], "unit", 0L),
      s$thread)])
  })
  causes <- cause_shares(runs)
  top <- top_causes(runs)
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
    requirements = requirements_table(runs),
    nodes = node_table(runs, summary, yardsticks, places),
    outliers = outlier_table(runs, summary, yardsticks, causes, places),
    tails = rbind(tail_table(runs), stream_tail_table(streams), fill = TRUE),
    streams = stream_table(streams),
    machines = machines,
    causes = causes,
    top_causes = top,
    advice = advice_table(runs, top),
    roles = NULL,
    loss_by_length = loss_by_length(runs)
  )

  tables$roles <- role_table(summary, tables$tails)
  for (t in kernel_tables()) tables[[t$name]] <- kernel_function(t$make)(runs)

  write_report_dir(out, function(tmp) {
    dir.create(file.path(tmp, "loggopsim"))
    write_loggopsim_traces(file.path(tmp, "loggopsim"), runs)
    # a paragraph and a picture a system, the picture drawn while the model runs
    each <- Filter(function(sys) !is.na(reference_run(summary, sys$host)),
      split(systems, by = "system"))
    pictures <- lapply(seq_along(each), function(i) {
      ref <- reference_run(summary, each[[i]]$host)
      system_plot(tmp, runs[[ref]], ref, labels$label[match(ref, labels$run)], summary, i,
        places)
    })
    plots <- report_plots(tmp, runs, tables, labels, peaks, yardsticks, places)
    tables$scale <- scale_rows()
    plots <- c(plots, scale_plot(tmp, tables$scale,
      function(n) labels$label[match(n, labels$run)]),
      unlist(lapply(names(streams), function(n) {
        stream_plots(tmp, n, streams[[n]], labels[run == n, label])
      })))
    paragraphs <- lapply(each, function(sys) {
      c(system_paragraph(sys, tables, labels, processes, runs,
        unname(quoted[as.character(sys$system[1])])), system = sys$system_name[1])
    })
    write_tables(tmp, tables)
    writeLines(report_html(data, tables, verdict_text(verdicts), first_screen_html(paragraphs,
      pictures), plots, untraced_runs(runs), pdf_note(pdf), trace_gaps(runs, causes)),
      file.path(tmp, "index.html"))
    if (pdf) write_pdf(tmp)
  })
}

# The runs whose slowdown the first screen quotes, by system: the
# uninjected run with the most ranks of the kernel first in the catalogue's
# quote order for the slowdown.
quoted_scale_runs <- function(summary, systems) {
  s <- summary[inject == "none" & !is.na(quote_order(kernel, "slowdown")), .(cpus = .N,
    preference = quote_order(kernel[1], "slowdown"), host = host[1]), by = run]
  s <- systems[s, on = "host"][order(preference, -cpus)][, .SD[1], by = system]
  setNames(s$run, s$system)
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

# A results directory of streamed runs only: their table, tails and plots.
write_stream_report <- function(data, out, pdf = TRUE) {
  streams <- data$streams
  labels <- rbindlist(lapply(names(streams), function(n) stream_label(n, streams[[n]])))
  tables <- list(runs = labels, streams = stream_table(streams),
    tails = stream_tail_table(streams))
  hosts <- unique(unlist(lapply(streams, function(s) {
    vapply(s$ranks, function(r) r$info$host, "")
  })))
  write_report_dir(out, function(tmp) {
    write_tables(tmp, tables)
    plots <- lapply(names(streams), function(n) {
      stream_plots(tmp, n, streams[[n]], labels[run == n, label])
    })
    body <- c(
      stream_section(tables, labels),
      html_section("runs", "Runs", html_table(labels[, .(label, directory = run)],
        "Runs, by what they measured, and their directories", "runs.csv")),
      html_section("plots", "Plots",
        unlist(lapply(plots, function(f) mapply(html_plot, f, names(f)))))
    )
    writeLines(html_page(paste("noisebench report:", paste(hosts, collapse = ", ")), body,
      pdf_note(pdf)), file.path(tmp, "index.html"))
    if (pdf) write_pdf(tmp)
  })
}
