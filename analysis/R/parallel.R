# lapply over the cores data.table may use (all of them unless the user set
# fewer, e.g. with R_DATATABLE_NUM_THREADS), as many as memory allows
# (memory_cores): forked workers share the samples read without copying
# them, and return only what they compute. The first error met in a worker
# is raised again here, with its own class and message.
lapply_cores <- function(x, f) {
  cores <- min(length(x), getDTthreads(), memory_cores())
  if (cores < 2) return(lapply(x, f))
  out <- parallel::mclapply(x, function(e) {
    tryCatch(f(e), error = function(cond) structure(list(cond), class = "worker_error"))
  }, mc.cores = cores)
  for (o in out) {
    if (inherits(o, "worker_error")) stop(o[[1]])
    # a worker killed (out of memory, a signal) leaves NULL and a warning
    if (is.null(o)) stop("analysis: a worker process died (out of memory?)", call. = FALSE)
  }
  out
}

# The most forked workers the memory holds: a worker's garbage collections
# write to the objects it shares (their marks), so each comes to copy much
# of this process's heap (a third to two thirds of a 400 MB report's,
# measured). As many workers as the memory available holds copies of this
# process: a report of a whole machine, tens of GB, takes fewer cores rather
# than running out of memory. The files are Linux's; elsewhere no bound.
memory_cores <- function(status = "/proc/self/status", meminfo = "/proc/meminfo") {
  memory_holds(proc_kib(status, "VmRSS"), meminfo)
}

# How many processes of `kib` each the memory available holds, at least
# one; Inf where that is not known.
memory_holds <- function(kib, meminfo = "/proc/meminfo") {
  available <- proc_kib(meminfo, "MemAvailable")
  if (is.na(kib) || is.na(available) || kib == 0) return(Inf)
  max(1, floor(available / kib))
}

# A "Field:   N kB" line's N of a /proc file, NA where there is none
proc_kib <- function(file, field) {
  line <- if (file.exists(file)) grep(paste0("^", field, ":"), readLines(file), value = TRUE)
  if (length(line) != 1) NA_real_ else as.numeric(gsub("[^0-9]", "", line))
}

# The CPUs this process may use: a job's, not the node's.
cpus_allowed <- function() length(parallel::mcaffinity() %||% 1)

# `command` (a shell's) started behind a pipe: a function that waits for it
# and returns the lines it printed, or stops with them, naming it as `what`,
# if it failed. A process of its own rather than a fork of this one: a fork
# copies each page of this heap that the garbage collector marks while both
# run (a report of a whole machine: GB).
start_process <- function(command, what) {
  process <- pipe(command, "r")
  function() {
    out <- readLines(process)
    # pclose's status: 0 when it exited with 0
    if (!identical(close(process) %||% 0L, 0L)) {
      stop(what, " failed: ", paste(out, collapse = " "), call. = FALSE)
    }
    out
  }
}

# R evaluating `expression` in a process of its own, with this process's
# packages (noisebench the same one), started as start_process does.
start_r <- function(expression) {
  libs <- unique(c(dirname(find.package("noisebench")), .libPaths()))
  start_process(paste(sprintf("R_LIBS=%s", shQuote(paste(libs, collapse = ":"))),
    shQuote(file.path(R.home("bin"), "Rscript")), "--vanilla -e", shQuote(expression), "2>&1"),
    expression)
}
