# Whether a survey is valid, by DESCRIPTION.md's Verification list: each
# fault found, one line each, rather than the first only. A vendor fixes
# them all at once; a report stops at the first (read_results).

# What a JUBE job's job_status says (run_kernel.sh writes it): "ok",
# "failed exit=N", "killed signal=S", or "unfinished" when there is none
# (the job never started, or was killed before run_kernel.sh could say so).
job_statuses <- function(results_dir) {
  scripts <- list.files(results_dir, "^run_kernel\\.sh$", recursive = TRUE, full.names = TRUE)
  scripts <- scripts[!grepl("(^|/)report[^/]*/", scripts)]
  dirs <- dirname(scripts)
  status <- vapply(file.path(dirs, "job_status"), function(f) {
    if (!file.exists(f)) return("unfinished")
    line <- readLines(f, n = 1, warn = FALSE)
    words <- strsplit(sub("^status=", "", line %||% ""), " ", fixed = TRUE)[[1]]
    # its own word and the detail (exit=N, signal=S), without the times
    paste(c(words[1], grep("^(exit|signal)=", words, value = TRUE)), collapse = " ")
  }, "")
  data.table(dir = dirs, status = unname(status))
}

# Each rank's shortest sample in ticks, where the catalogue names one
# (shortest_sample): the timer's read must be a small part of it. NA where
# a sample is the read itself (the detour recorder's iteration).
sample_ticks <- function(run, info) {
  at <- info$shortest_sample
  if (is.null(at)) return(rep(NA_real_, rank_count(run)))
  value <- if (at$of == "run") {
    rep(as.numeric(run$meta[[at$field]] %||% NA), rank_count(run))
  } else {
    rank_values(run, at$field)
  }
  if (at$unit == "us") value * 1000 * rank_values(run, "ticks_per_ns") else value
}

# What run_faults reads of a rank, beyond its count of samples and its
# shortest sample: a node's ranks table's columns (kernels.json's
# node_files), by their paths.
checked_columns <- c("cpu", "ticks_per_ns", "timer_read_ticks", "injections", "files\\.[0-9]+",
  "file_ranges\\.[0-9]+\\.[12]")

# The faults of one run (its JSON at path), a line each; NULL where the JSON
# is no kernel run (noise-info's machine.json, a stream's description).
run_faults <- function(path, rules) {
  said <- function(what) paste0(path, ": ", what)
  meta <- tryCatch(read_json_file(path), error = function(e) e)
  if (inherits(meta, "error")) return(conditionMessage(meta))
  if (is.null(meta[["kernel"]]) || !is.null(meta[["stream"]])) return(NULL)
  out <- character()
  if (!isTRUE(meta$complete)) {
    out <- said(sprintf("incomplete (interrupted by %s)", meta$interrupted_by %||% "an error"))
  }
  # the ranks' entries, from the JSON or the nodes' files: of the nodes'
  # tables only the columns checked, of every host (a rank missing is named
  # below, rank by rank, not counted as read_ranks_table would)
  info <- kernel_info(meta$kernel, path)
  ranks <- tryCatch({
    if (!is.null(meta[["ranks_files"]])) {
      read_ranks_table(path, hosts = ".", meta, columns = paste0("^(",
        paste(c(info$samples_per_rank, gsub(".", "\\.", info$shortest_sample$field, fixed = TRUE),
          checked_columns), collapse = "|"), ")$"))
    } else if (!is.null(meta[["node_files"]])) {
      meta[["ranks"]] <- read_node_ranks(meta, path) %||% list()
      NULL
    }
  }, error = function(e) e)
  if (inherits(ranks, "error")) return(c(out, conditionMessage(ranks)))
  run <- list(kernel = meta$kernel, meta = meta, ranks = ranks)
  n <- rank_count(run)
  expected <- as.integer(meta$ranks_in_run %||% n)
  ranks <- rank_values(run, "rank", NA_integer_)
  missing <- setdiff(seq_len(expected) - 1L, ranks)
  if (length(missing)) {
    out <- c(out, said(sprintf("%d of %d ranks missing (%s)", length(missing), expected,
      number_list(missing))))
  }
  each <- function(bad, what) {
    if (any(bad, na.rm = TRUE)) {
      c(out, said(sprintf("%s: rank %s", what, number_list(ranks[which(bad)]))))
    } else out
  }
  # a run without pinning records the CPU each rank started on; one before
  # the field says so by a cpu of -1
  out <- if (isFALSE(meta$pinned)) c(out, said("not pinned to CPUs (--no-pin)")) else
    each(rank_values(run, "cpu", -1L) < 0, "not pinned to a CPU")
  tpn <- rank_values(run, "ticks_per_ns")
  read <- rank_values(run, "timer_read_ticks")
  out <- each(is.na(tpn) | is.na(read), "not calibrated (no ticks_per_ns or timer_read_ticks)")
  out <- each(read >= 0.01 * sample_ticks(run, info),
    "the timer's read is 1% of a sample or more (too coarse)")
  out <- each(rank_values(run, "injections", 0) > 0, "noise injected (--inject)")
  lost <- as.numeric(meta$trace$lost_events %||% 0)
  if (lost > 0) out <- c(out, said(sprintf("the trace lost %.0f events", lost)))
  # every data file there and whole to its last line (no sample read)
  files <- tryCatch(check_run_files(rank_files(run, path),
    as.numeric(rank_values(run, info$samples_per_rank)), rank_file_ranges(run, path),
    dirname(path), path), error = function(e) e)
  if (inherits(files, "error")) out <- c(out, conditionMessage(files))
  if (!is.null(rules) && !identical(unlist(meta$requirements$rules), rules)) {
    source <- meta$requirements$source %||% "other rules"
    out <- c(out, said(sprintf("judged by %s, not by the rules given",
      if (source == "default") "the default rules (Sequoia's)" else source)))
  }
  out
}

# "0-3, 7, 9": ranks in runs, at most `k` of them named.
number_list <- function(x, k = 20) {
  x <- sort(unique(x))
  runs <- split(x, cumsum(c(1, diff(x) != 1)))
  parts <- vapply(runs, function(r) {
    if (length(r) == 1) as.character(r) else sprintf("%d-%d", r[1], r[length(r)])
  }, "")
  paste(if (length(parts) > k) c(utils::head(parts, k), "...") else parts, collapse = ", ")
}

#' Check a survey against the Verification list
#'
#' \code{validate_results} checks every kernel run and JUBE job under a directory, as
#' DESCRIPTION.md's Verification list says a valid acceptance run is: each job's status
#' \code{ok}; each run complete, every rank there with its data files; each rank pinned,
#' calibrated, its timer's read under 1\% of a sample, nothing injected; no trace event lost;
#' and, given the rules, each run judged by them. It reads no samples: only the JSON, each data
#' file's size and last byte.
#'
#' @param results_dir a survey's results directory.
#' @param rules the rules each run must have been judged by, as \code{noise-info
#'   --requirements FILE} prints them (comments left out), or \code{NULL} for any.
#' @return the faults, one line each (none: valid), with attributes \code{runs} and \code{jobs},
#'   how many of each were checked.
#' @export
validate_results <- function(results_dir, rules = NULL) {
  results_dir <- sub("/+$", "", results_dir)
  paths <- find_runs(results_dir)
  jobs <- job_statuses(results_dir)
  bad <- jobs[jobs$status != "ok"]
  faults <- Filter(Negate(is.null), lapply(paths, run_faults, rules = rules))
  out <- c(sprintf("%s: job %s", bad$dir, bad$status), unlist(faults))
  runs <- length(faults)
  if (runs == 0) out <- c(out, paste0(results_dir, ": no kernel runs"))
  structure(out, runs = runs, jobs = nrow(jobs))
}

#' @rdname validate_results
#' @param file a requirements file (a site's commitments).
#' @return \code{requirements_rules}: the file's rules as the kernels read them, checked by
#'   \code{noise-info --requirements}; a bad file stops with its line.
#' @export
requirements_rules <- function(file) {
  info <- find_program("noise-info", "NOISEBENCH_INFO")
  if (is.na(info)) stop("no noise-info beside the package or on PATH to read ", file, call. = FALSE)
  out <- suppressWarnings(system2(info, c("--requirements", shQuote(file)), stdout = TRUE,
    stderr = TRUE))
  if (!is.null(attr(out, "status"))) stop(paste(out, collapse = " "), call. = FALSE)
  grep("^#", out, value = TRUE, invert = TRUE)
}
