# What the harness knows of each kernel, from the kernel catalogue
# (noisebench_kernels, catalogue.R): its data files and their
# columns, the column its noise is measured on, and what kind of kernel it
# is (docs/kernels.md says what each field means).

#' A kernel's entry in the catalogue
#'
#' What noisebench knows of a kernel, from src/kernels/kernels.json: its
#' files, the column its noise is measured on, whether it times a fixed work
#' or counts the work of a fixed time, how its loss is read, its headline
#' figure.
#'
#' @param kernel the kernel's name, as its runs' JSON gives it.
#' @param path the file that named it, for the error when the catalogue has no such kernel.
#' @return The entry, a list.
#' @export
kernel_info <- function(kernel, path = NA) {
  info <- noisebench_kernels$kernels[[kernel]]
  if (is.null(info)) {
    stop_input(path, sprintf("unknown kernel '%s' (src/kernels/kernels.json has: %s)", kernel,
      paste(names(noisebench_kernels$kernels), collapse = ", ")))
  }
  info
}

# The kernels whose catalogue entry has(info) holds, by name.
kernels_where <- function(has) {
  names(Filter(function(info) isTRUE(has(info)), noisebench_kernels$kernels))
}

# The labels of the kernels has(info) holds for, as a page names them:
# "FWQ and P-SNAP".
kernel_labels <- function(has) {
  labels <- vapply(kernels_where(has), function(k) noisebench_kernels$kernels[[k]]$label, "")
  if (length(labels) < 2) return(paste(labels, collapse = ""))
  paste(paste(utils::head(labels, -1), collapse = ", "), "and", utils::tail(labels, 1))
}

# Of a named list of runs, those of the kernels has(info) holds for.
runs_where <- function(runs, has) Filter(function(r) isTRUE(has(kernel_info(r$kernel))), runs)

# Fixed time: the kernel counts the work done in each quantum of a fixed
# grid, so its samples are evenly spaced in time and have a spectrum; the
# others time a fixed work, and their samples follow each other.
fixed_time <- function(info) info$fixed == "time"

# Samples whose loss is the value itself (recorded detours), not the value's
# distance from the best.
records_detours <- function(info) info$loss == "detours"

# The kernels whose samples make a noise trace (noise_trace): fixed work,
# whose samples tile the run.
traced <- function(info) info$fixed == "work"

# The loss grows as the value falls: work counted in a fixed time.
falling <- function(info) info$loss == "falling"

# The kernel's values a ns: ticks (of the rank's host, ticks_per_ns) or ns.
values_per_ns <- function(info, ticks_per_ns) if (info$value_unit == "ticks") ticks_per_ns else 1

# The order a run's kernel is quoted in, for what ("noise": the system's
# paragraph; "slowdown": the predicted slowdown), NA where it is not (and for
# no kernel: data.table tries a grouping's j on no rows). Looked up once a
# kernel: `kernel` is a column of a row a rank.
quote_order <- function(kernel, what) {
  kernels <- unique(kernel)
  order <- vapply(kernels, function(k) {
    if (is.na(k)) NA_real_ else kernel_info(k)$quote[[what]] %||% NA_real_
  }, 0, USE.NAMES = FALSE)
  order[match(kernel, kernels)]
}

# The kernels' own tables (the catalogue's tables: name, the function that
# makes it from the runs, the columns the page shows) and own plots (the
# functions that draw them, as report_plots' are called), over every kernel.
kernel_tables <- function() {
  unlist(lapply(noisebench_kernels$kernels, function(info) info$tables), recursive = FALSE,
    use.names = FALSE)
}

# A function of this package by name (a catalogue's plots and tables):
# looked up in the package, whoever calls.
kernel_function <- function(name) get(name, mode = "function", envir = parent.env(environment()))

kernel_plots <- function() {
  unlist(lapply(noisebench_kernels$kernels, function(info) info$plots), use.names = FALSE)
}
