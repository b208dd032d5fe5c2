# What the harness knows of each kernel, from src/kernels/kernels.json (read
# by load_analysis into noisebench_kernels): its data files and their
# columns, the column its noise is measured on, and whether the best sample
# is the smallest (FWQ, P-SNAP) or the largest (FTQ).

kernel_info <- function(kernel, path = NA) {
  info <- noisebench_kernels$kernels[[kernel]]
  if (is.null(info)) {
    stop_input(path, sprintf("unknown kernel '%s' (src/kernels/kernels.json has: %s)", kernel,
      paste(names(noisebench_kernels$kernels), collapse = ", ")))
  }
  info
}
