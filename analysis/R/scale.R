# The slowdown a bulk-synchronous application would see at scale, predicted
# from measured noise traces as Hoefler, Schneider and Lumsdaine do it in
# LogGOPSim ("Characterizing the Influence of System Noise on Large-Scale
# Applications by Simulation", SC10). The application computes for T, then
# all N processes synchronise; a phase lasts as long as its slowest process:
# T plus the largest noise any process met in its window of length T.
# Each process reads the noise trace of a measured rank from an offset in it:
# a random offset per process (uncoordinated noise) or one offset for all
# (co-scheduled). docs/analysis.md states the assumptions.

#' The report's grid of the slowdown at scale
#'
#' The phase lengths (microseconds) and process counts at which the report
#' predicts the slowdown (\code{\link{predict_slowdown}}).
#'
#' @format Numeric vectors.
#' @export
scale_phases_us <- c(10, 100, 1000, 10000, 100000)
#' @rdname scale_phases_us
#' @export
scale_processes <- c(1, 10, 100, 1000, 10000, 100000)
# Offsets drawn per rank trace: the windows' empirical distribution.
scale_windows <- 20000
# The most rank traces the model reads of one run: a run of more ranks is
# represented by this many spread evenly over its ranks (model_ranks), so
# that the model costs the same for a node or a whole machine.
scale_traces_max <- 64
# A phase longer than this share of the trace has too few independent
# windows to say anything of it.
scale_max_phase_share <- 0.1
# Operations noise-simulate may spend on one phase length and process count
# (a compute and two a round of the collective, per process and phase):
# 0.1 s at most on a core of 2 GHz, measured on 64 ranks' FWQ traces.
scale_simulation_budget <- 5e6
# The most processes the report simulates: a phase of 10^5 costs 3.5 10^6
# operations, seconds a plot (analysis/inst/predict.R simulates what it is
# asked).
scale_simulate_up_to <- 1e4

# A rank's noise trace: when each detour began and how long it took beyond
# the undisturbed sample, over a trace of `duration`, in the kernel's own
# unit, `per_ns` of them a ns (FWQ's ticks: converting millions of samples
# would cost more than the rest). NULL for kernels without one (FTQ: its
# loss has no start time inside the quantum).
#' @rdname predict_slowdown
#' @export
noise_trace <- function(run, i) {
  t <- run$threads[[i]]
  r <- rank_entries(run, i)[[1]]
  x <- noise_values(run, t$data)
  # samples that follow each other, each losing what it took beyond `best`
  # (a sample that lost nothing is a detour of length 0, which adds nothing):
  # kept as the samples and their running sum, from which the detours'
  # starts and lengths follow (a run of millions would cost more in copies
  # than in the rest)
  tiled <- function(x, best, per_ns) {
    ends <- cumsum(x)
    list(x = x, ends = ends, best = best, duration = ends[length(ends)], per_ns = per_ns)
  }
  info <- kernel_info(run$kernel)
  if (!traced(info)) return(NULL)
  if (!records_detours(info)) {
    if (!is.null(info$ideal) && !is.null(r[[info$ideal]])) {
      return(tiled(x, r[[info$ideal]] * 1e3, 1))
    }
    return(tiled(x, best_value(x, run$kernel, t$table), values_per_ns(info, t$ticks_per_ns)))
  }
  # recorded detours: each loses what it took beyond an ordinary iteration
  d <- t$data
  excess <- pmax(d$length_ns - r$min_iteration_ns, 0)
  # period_s leaves out the time the detour store took to grow, which the
  # detours' start times include: the trace lasts at least until its last
  # detour ended
  list(start = d$start_ns[excess > 0], length = excess[excess > 0],
    duration = max(r$period_s * 1e9, d$start_ns + d$length_ns), per_ns = 1)
}

# A trace in LogGOPSim's --noise-trace format as write_loggopsim_traces
# writes it (or Netgauge's selfish, given its length): a header
# "# ...: D ns traced", then "start<TAB>length" in ns a line.
#' @rdname predict_slowdown
#' @export
read_noise_trace <- function(path) {
  header <- readLines(path, n = 1, warn = FALSE)
  duration <- suppressWarnings(as.numeric(
    sub(".*: *([0-9.eE+]+) ns traced.*", "\\1", header)))
  if (!length(header) || !startsWith(header, "#") || is.na(duration) || duration <= 0) {
    stop_input(path, "want a header '# ...: D ns traced' (the report's loggopsim/ files)")
  }
  x <- fread(path, skip = 1, header = FALSE, col.names = c("start", "length"))
  if (nrow(x) && (anyNA(x) || any(x$length < 0) || any(x$start >= duration))) {
    stop_input(path, "want start<TAB>length in ns, each start within the traced time")
  }
  list(start = x$start, length = x$length, duration = duration, per_ns = 1)
}

#' @rdname predict_slowdown
#' @export
trace_seconds <- function(trace) trace$duration / (trace$per_ns %||% 1) / 1e9

# A trace ready for windows: how many detours start before a time, and the
# start, length and running sum of lengths of the i-th (in time order).
repeat_trace <- function(trace) {
  r <- list(duration = trace$duration, per_ns = trace$per_ns %||% 1)
  if (!is.null(trace$ends)) {
    # tiled samples: detour i starts where sample i - 1 ended
    e <- trace$ends
    x <- trace$x
    best <- trace$best
    # (arithmetic on the conditions, not ifelse: several times faster on the
    # windows' hundred thousand indices)
    return(c(r, list(n = length(e),
      before = function(v) (v > 0) + findInterval(v, e, left.open = TRUE),
      start_of = function(i) (i > 1) * e[pmax(i - 1, 1)],
      length_of = function(i) x[i] - best,
      running = function(i) (i > 0) * (e[pmax(i, 1)] - best * i))))
  }
  s <- trace$start
  l <- trace$length
  if (is.unsorted(s)) {
    o <- order(s)
    s <- s[o]
    l <- l[o]
  }
  sums <- cumsum(l)
  c(r, list(n = length(s),
    before = function(v) findInterval(v, s, left.open = TRUE),
    start_of = function(i) s[i],
    length_of = function(i) l[i],
    running = function(i) (i > 0) * sums[pmax(i, 1)]))
}

# The noise (ns) met by windows of each length in phase_ns starting at
# `offsets` (ns, in [0, duration)), a column per length: the rest of a detour
# under way at the start, and every detour that begins in the window
# (LogGOPSim's get_noise). The trace repeats: a window past its end goes on
# at its start, and before its first detour the last one is under way, a
# period earlier.
window_noise <- function(trace, offsets, phase_ns) {
  r <- if (is.null(trace$before)) repeat_trace(trace) else trace
  shape <- c(length(offsets), length(phase_ns))
  if (r$n == 0) return(matrix(0, shape[1], shape[2]))
  offsets <- offsets * r$per_ns
  d <- r$duration
  end <- outer(offsets, phase_ns * r$per_ns, "+")
  wraps <- end > d
  # one search for every start and end: findInterval checks its table each
  # call. It searches on from where its last search ended, so offsets in
  # order (analytic_slowdown's) walk the table once a column and wrap
  found <- r$before(c(offsets, end - d * wraps))
  a <- found[seq_along(offsets)]
  b <- matrix(found[-seq_along(offsets)], shape[1])
  starting <- r$running(b) - r$running(a) + wraps * r$running(r$n)
  last <- a + (a == 0) * r$n
  from <- r$start_of(last) - (a == 0) * d
  matrix(starting + pmax(from + r$length_of(last) - offsets, 0), shape[1]) / r$per_ns
}

# The expected largest of N draws from the values w, each equally likely:
# P(max <= w_(i)) = (i / n)^N. Exact for the empirical distribution, so it
# is the Monte Carlo of phases carried to its limit. Summed by parts, the
# largest value less each step up weighted by the chance that the maximum is
# below it: (i / n)^N is 0 in doubles below exp(-745), so a large N weighs
# only the top steps.
expected_max <- function(w, processes) {
  w <- sort(w)
  m <- length(w)
  if (m < 2) return(rep(if (m) w else 0, length(processes)))
  # only the steps up count: the pooled windows of a quiet trace are mostly
  # ties (no noise at all)
  up <- which(w[-1] != w[-m])
  step <- w[up + 1] - w[up]
  log_p <- log(up / m)
  vapply(processes, function(n) {
    top <- log_p > -745 / n
    w[m] - sum(exp(n * log_p[top]) * step[top])
  }, numeric(1))
}

# The predicted slowdown of one set of rank traces (measured together): for
# each phase length and process count, uncoordinated and co-scheduled, the
# expected phase time over T, and the share of phases some process met noise.
# Where the analytic model does not hold (model_holds), the slowdown is
# noise-simulate's (source "simulation", its standard error in
# simulated_se); model_slowdown is the model's everywhere.
#' The slowdown noise predicts for bulk-synchronous applications
#'
#' \code{predict_slowdown} predicts the slowdown of an application computing
#' phases of \code{phases_us} between global synchronisations of
#' \code{processes} processes, under the noise of the traces given,
#' uncoordinated and co-scheduled; where its model does not hold it runs
#' \code{noise-simulate}. \code{noise_trace} is a rank's trace of a run,
#' \code{read_noise_trace} reads a LogGOPSim noise trace, and
#' \code{trace_seconds} is a trace's length. The report's grid is
#' \code{\link{scale_phases_us}} and \code{\link{scale_processes}}.
#'
#' @param traces a list of noise traces.
#' @param phases_us phase lengths, microseconds.
#' @param processes process counts.
#' @param windows the offsets drawn per trace.
#' @param seed the random seed.
#' @param simulator the \code{noise-simulate} program, or \code{NA}.
#' @param simulate_up_to the most processes simulated.
#' @param threads the threads \code{noise-simulate} runs its cells on (\code{OMP_NUM_THREADS}); by
#'   default one for each CPU this process may use.
#' @param run,i a run and the index of one of its ranks.
#' @param path a LogGOPSim noise trace file.
#' @param trace a noise trace.
#' @return \code{predict_slowdown}: a \code{data.table}, a row per mode, phase
#' and process count.
#' @order 1
#' @export
predict_slowdown <- function(traces, phases_us = scale_phases_us,
                             processes = scale_processes, windows = scale_windows,
                             seed = 1, simulator = noisebench_simulator,
                             simulate_up_to = scale_simulate_up_to, threads = cpus_allowed()) {
  traces <- Filter(Negate(is.null), traces)
  if (length(traces) == 0) return(data.table())
  domain <- model_domain(traces, phases_us)
  if (length(domain$phases_us) == 0) return(data.table())
  # the cells where the model does not hold (uncoordinated: co-scheduled
  # counts at most as many processes as traces, and holds wherever
  # uncoordinated does) are simulated while the model's windows are
  # computed here
  outside <- CJ(phase_us = domain$phases_us, processes = processes[processes <= simulate_up_to])[
    !domain$holds(phase_us * 1e3, processes)]
  simulated <- if (nrow(outside) && !is.na(simulator)) {
    dir <- tempfile("noise-traces")
    on.exit(unlink(dir, recursive = TRUE))
    start_simulation(traces, unique(outside$phase_us), unique(outside$processes), simulator,
      dir, seed, threads = threads)
  }
  rows <- analytic_slowdown(domain, processes, windows, seed)
  rows[, `:=`(model_slowdown = slowdown, simulated_se = NA_real_,
    source = fifelse(model_holds, "model", if (is.na(simulator)) {
      "model (outside where it holds: not simulated)"
    } else {
      sprintf("model (outside where it holds: not simulated above %s processes)",
        format(simulate_up_to, big.mark = ",", scientific = FALSE))
    }))]
  if (is.null(simulated)) return(rows[])
  rows[simulated(), on = c("mode", "phase_us", "processes"),
    `:=`(slowdown = ifelse(model_holds, slowdown, i.slowdown),
      simulated_se = ifelse(model_holds, NA_real_, i.se),
      source = ifelse(model_holds, source, "simulation"))]
  rows[]
}

# noise-simulate over the traces (written for it in LogGOPSim's format,
# into dir), started: a function that waits for it and returns a row per
# mode, phase length and process count, with the slowdown and its standard
# error.
start_simulation <- function(traces, phases_us, processes, simulator, dir, seed = 1,
                             budget = scale_simulation_budget, threads = 1) {
  dir.create(dir)
  files <- vapply(seq_along(traces), function(i) {
    write_noise_trace(traces[[i]], file.path(dir, sprintf("rank%d.txt", i)),
      sprintf("# rank %d", i))
  }, "")
  args <- c("--phase-us", paste(phases_us, collapse = ","),
    "--processes", paste(format(processes, scientific = FALSE, trim = TRUE), collapse = ","),
    "--seed", seed, "--budget", format(budget, scientific = FALSE), files)
  command <- paste(sprintf("OMP_NUM_THREADS=%d", threads), paste(shQuote(c(simulator, args)),
    collapse = " "), "2>&1")
  simulation <- start_process(command, simulator)
  function() fread(text = simulation())
}

# The phases the model can say anything of (each at most
# scale_max_phase_share of the shortest trace) and where it holds
# (tests/test_scale_model.py, docs/analysis.md): no detour longer than the
# phase, and at most one process in a detour at a time on average; beyond, a
# phase's start is no random point of the trace and detours chain through
# the synchronisation. Cheap: no window is read.
model_domain <- function(traces, phases_us) {
  repeated <- lapply(traces, repeat_trace)
  shortest <- min(vapply(traces, trace_seconds, 0)) * 1e9
  longest <- max(vapply(repeated, function(r) {
    if (r$n == 0) 0 else max(r$length_of(seq_len(r$n))) / r$per_ns
  }, 0))
  share <- mean(vapply(repeated, function(r) r$running(r$n) / r$duration, 0))
  list(repeated = repeated, ranks = length(traces),
    phases_us = phases_us[phases_us * 1e3 <= scale_max_phase_share * shortest],
    holds = function(phase_ns, n) longest <= phase_ns & n * share <= 1)
}

analytic_slowdown <- function(domain, processes, windows, seed) {
  phases_us <- domain$phases_us
  holds <- domain$holds
  ranks <- domain$ranks
  # the same offsets on every rank: co-scheduled processes share them
  set.seed(seed)
  # in order: window_noise's searches are then a walk (the windows' order
  # changes no figure)
  u <- sort(stats::runif(windows))
  noise <- lapply(domain$repeated, function(r) {
    window_noise(r, u * r$duration / r$per_ns, phases_us * 1e3)
  })
  rbindlist(lapply(seq_along(phases_us), function(p) {
    phase_ns <- phases_us[p] * 1e3
    each <- lapply(noise, function(m) m[, p])
    pooled <- unlist(each, use.names = FALSE)
    quiet <- mean(pooled == 0)
    # the largest noise over the first n ranks at each offset, for each n
    # asked (beyond the ranks, all of them), taken rank by rank once
    wanted <- pmin(processes, ranks)
    largest <- each[[1]]
    first_n <- vector("list", ranks)
    for (k in seq_len(ranks)) {
      if (k > 1) largest <- pmax(largest, each[[k]])
      if (k %in% wanted) first_n[[k]] <- largest
    }
    cosched <- vapply(wanted, function(n) mean(first_n[[n]]), numeric(1))
    cosched_quiet <- vapply(wanted, function(n) mean(first_n[[n]] == 0), numeric(1))
    rbind(
      data.table(mode = "uncoordinated", phase_us = phases_us[p], processes = processes,
        slowdown = 1 + expected_max(pooled, processes) / phase_ns,
        phases_hit_percent = 100 * (1 - quiet^processes),
        model_holds = holds(phase_ns, processes)),
      data.table(mode = "co-scheduled", phase_us = phases_us[p], processes = processes,
        slowdown = 1 + cosched / phase_ns,
        phases_hit_percent = 100 * (1 - cosched_quiet),
        model_holds = holds(phase_ns, pmin(processes, ranks)))
    )
  }))
}

# The ranks (positions in the run) whose traces the model reads: all of
# them up to `k`, else k spread evenly over the run's ranks, which are in
# the order of their nodes, so over its nodes too.
model_ranks <- function(n, k = scale_traces_max) {
  if (n <= k) seq_len(n) else unique(round(seq(1, n, length.out = k)))
}

# One row per run with traces (FWQ, P-SNAP, selfish), phase length, process
# count and mode: `ranks` in the run, `traces` the model read (model_ranks).
#' @rdname noise_summary
#' @export
scale_table <- function(runs, simulate = names(runs), processes = NULL) {
  start_scale_table(runs, simulate, processes)()
}

# scale_table computed by R processes of their own (start_r, not forks:
# start_process says why), started now: a function that waits for them
# (when first called) and returns the table. The report draws its other
# plots meanwhile. The traces, at most scale_traces_max a run, are read
# here and handed over in a file a run.
# simulate: the runs whose cells outside the model noise-simulate replays
# (by default all; the report's, those its first screen quotes: the
# simulation is most of the model's time); processes: the counts besides
# scale_processes, such as the machine's own.
start_scale_table <- function(runs, simulate = names(runs), processes = NULL) {
  runs <- runs_where(runs, traced)
  if (length(runs) == 0) return(function() data.table())
  dir <- tempfile("noise-scale")
  dir.create(dir)
  jobs <- file.path(dir, sprintf("run%d.rds", seq_along(runs)))
  Map(function(run, name, job) {
    traces <- lapply(model_ranks(length(run$threads)), function(i) noise_trace(run, i))
    hosts <- unique(thread_values(run, "host", ""))
    about <- data.table(run = name, kernel = run$kernel, hosts = hosts_text(hosts),
      ranks = length(run$threads), traces = length(traces),
      injected = !is.null(run$meta$inject) ||
        any(!is.na(rank_injects(run)$duration_us)),
      trace_s = min(vapply(traces, trace_seconds, 0)))
    saveRDS(list(about = about, traces = traces, simulate = name %in% simulate,
      processes = sort(unique(c(scale_processes, processes)))), job, compress = FALSE)
  }, runs, names(runs), jobs)
  # as many workers as the CPUs this process may use (a job's, not the
  # node's) and the memory available hold (scale_worker_kib), each taking
  # its share of the runs one after the other (an R process takes 0.25 s
  # to start and load this package); the CPUs shared by their simulations,
  # where most of the model's time goes. One CPU is left to this process:
  # its tables and plots, drawn meanwhile, are the report's longest
  # path, and a simulation on every CPU would take time from them.
  cpus <- max(1, cpus_allowed() - 1)
  n <- min(length(jobs), cpus, memory_holds(scale_worker_kib(max(file.size(jobs)))))
  threads <- max(1, cpus %/% n)
  workers <- lapply(split(jobs, seq_along(jobs) %% n), function(share) {
    start_r(sprintf("noisebench:::scale_worker(%s, %d)", paste(deparse(share), collapse = ""),
      threads))
  })
  table <- NULL
  function() {
    if (!is.null(table)) return(table)
    on.exit(unlink(dir, recursive = TRUE))
    # every worker waited for, then the first failure raised
    failed <- Filter(Negate(is.null), lapply(workers, function(w) {
      tryCatch({
        w()
        NULL
      }, error = identity)
    }))
    if (length(failed)) stop(failed[[1]])
    rows <- rows_file(jobs)
    table <<- rbindlist(lapply(rows[file.exists(rows)], readRDS))
    table
  }
}

# A worker's memory (KiB) for a job file of `bytes`: R and noisebench take
# 115 MiB, and a job of 64 FWQ traces of 10,000 samples (10 MB) took the
# worker to 290 MiB (its traces and the model's windows).
scale_worker_kib <- function(bytes) 115 * 1024 + 18 * bytes / 1024

rows_file <- function(job) sub("\\.rds$", ".rows.rds", job)

# Each run's rows of the scale table, from the traces start_scale_table
# wrote to each of `jobs`, into rows_file(job) (none when the model can say
# nothing).
scale_worker <- function(jobs, threads) {
  for (job in jobs) {
    work <- readRDS(job)
    rows <- predict_slowdown(work$traces, processes = work$processes, threads = threads,
      simulator = if (work$simulate) noisebench_simulator else NA)
    if (nrow(rows)) saveRDS(cbind(work$about, rows), rows_file(job))
  }
}

format_phase <- function(us) {
  ifelse(us >= 1000, paste(us / 1000, "ms"), paste(us, "us"))
}

# The traces the model read (model_ranks: every rank's up to
# scale_traces_max) in LogGOPSim's noise format (--noise-trace): one detour
# a line, "start<TAB>duration" in ns, the duration beyond the undisturbed
# sample, as Netgauge writes its selfish trace. Returns the files written.
write_loggopsim_traces <- function(dir, runs) {
  unlist(lapply(names(runs), function(name) {
    run <- runs[[name]]
    if (!traced(kernel_info(run$kernel))) return(NULL)
    vapply(model_ranks(length(run$threads)), function(i) {
      t <- run$threads[[i]]
      write_noise_trace(noise_trace(run, i),
        file.path(dir, sprintf("%s-rank%d.txt", gsub("[^A-Za-z0-9._-]+", "_", name), t$unit)),
        sprintf("# noisebench %s run %s, rank %d on %s CPU %d", run$kernel, name, t$unit,
          t$host, t$cpu))
    }, character(1))
  }))
}

# One trace in LogGOPSim's format, the header's words followed by the
# traced time ("...: D ns traced", as read_noise_trace and noise-simulate
# read it); returns the file.
write_noise_trace <- function(tr, file, header) {
  r <- repeat_trace(tr)
  i <- seq_len(r$n)
  lost <- i[r$length_of(i) > 0]
  writeLines(sprintf("%s: %.0f ns traced", header, trace_seconds(tr) * 1e9), file)
  fwrite(data.table(start = round(r$start_of(lost) / r$per_ns),
    length = round(r$length_of(lost) / r$per_ns)), file, append = TRUE, sep = "\t", scipen = 100,
    col.names = FALSE)
  file
}
