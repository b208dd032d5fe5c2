# What the harness knows of each kernel, from the kernel catalogue
# (noisebench_kernels, catalogue.R): its data files and their
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
