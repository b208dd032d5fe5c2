# lapply over the cores data.table may use (all of them unless the user set
# fewer, e.g. with R_DATATABLE_NUM_THREADS): forked workers share the samples
# read without copying them, and return only what they compute. The first
# error met in a worker is raised again here, with its own class and message.
lapply_cores <- function(x, f) {
  cores <- min(length(x), getDTthreads())
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

# The CPUs this process may use: a job's, not the node's.
cpus_allowed <- function() length(parallel::mcaffinity() %||% 1)
