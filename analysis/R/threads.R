# A run's ranks as threads, each an environment (unit, cpu, host,
# ticks_per_ns, start_tick, and its samples as data and table, read when
# first asked for: read_run), made when first asked for. A list of them would
# cost 1.1 KB a rank before any is used: 1.1 GB of a million ranks, of which
# the report reads a few hundred's samples (those it shows in detail or
# models). It is a list of as many NULLs as ranks, with the function that
# makes a rank's thread (`make`, of its position in the run), the ranks'
# fields every thread holds (`fields`, vectors a value a rank: what
# thread_values reads without making any), the positions it holds (`index`,
# of a subset) and the threads made so far (`made`, shared by its subsets,
# so that a rank's samples are read once).
rank_threads <- function(make, fields, index = seq_along(fields$unit), made = new.env()) {
  structure(vector("list", length(index)), class = "nb_threads", make = make,
    fields = fields, index = index, made = made)
}

#' @export
`[[.nb_threads` <- function(x, i) {
  at <- attr(x, "index")[[i]]
  made <- attr(x, "made")
  key <- as.character(at)
  t <- made[[key]]
  if (is.null(t)) {
    t <- attr(x, "make")(at)
    assign(key, t, envir = made)
  }
  t
}

#' @export
`[.nb_threads` <- function(x, i) {
  rank_threads(attr(x, "make"), attr(x, "fields"), attr(x, "index")[i], attr(x, "made"))
}

# lapply, vapply and Filter see the threads themselves, made
#' @export
as.list.nb_threads <- function(x, ...) lapply(seq_along(x), function(i) x[[i]])

# Each thread's `field` (unit, cpu, host, ticks_per_ns: rank_threads'
# fields), of `type`, for every thread of the run at once, without making them.
thread_values <- function(run, field, type) {
  threads <- run$threads
  as.vector(attr(threads, "fields")[[field]][attr(threads, "index")], typeof(type))
}
