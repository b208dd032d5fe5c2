# The tails: how bad the worst case is. For each run and rank, the time each
# sample lost to noise, in us, as the kernel defined it (the JSON's
# tails.loss, written by the C that measured: FWQ a sample's excess over the
# fastest, P-SNAP over the ideal iteration, FTQ the missing work of a quantum
# as time, selfish each detour beyond the minimal iteration). Its percentiles
# and maximum, and how often per hour of the run it passed 10 us, 100 us and
# 1 ms.

tail_probs <- c(p50 = 0.5, p99 = 0.99, p99_9 = 0.999, p99_99 = 0.9999)
tail_thresholds_us <- c(10, 100, 1000)

# How a rank's samples map to the time each lost (us): `f` of a sample's
# value, the values (`x`), the reader's table of distinct values and their
# counts where it made one (`table`: value, freq, and `us`, f of each), and
# the rank's measured time in s, from the kernel's definition (tails.loss:
# base, us_per_unit, falling, seconds). With best = "robust", a kernel whose
# loss grows as the value falls (FTQ) is measured against the 99.9th
# percentile of its values instead of the largest: a few quanta run
# unusually fast when the timer read is most of a count, and the largest
# then moves from run to run. Every f is monotonic, so the table's losses are
# the samples' in a known order.
loss_model <- function(run, i, best = c("measured", "robust")) {
  best <- match.arg(best)
  t <- run$threads[[i]]
  loss <- rank_tails(run, i)$loss
  x <- noise_values(run, t$data)
  tab <- t$table
  base <- loss$base
  if (best == "robust" && isTRUE(loss$falling) && length(x)) {
    base <- stats::quantile(x, 0.999, names = FALSE)
  }
  f <- function(v) loss_us(v, base, loss$us_per_unit, isTRUE(loss$falling))
  if (!is.null(tab)) tab$us <- f(tab$value)
  list(f = f, seconds = loss$seconds, x = x, table = tab)
}

# The time values lost (us), as tails.h defines it: (x - base) us_per_unit,
# or (base - x) us_per_unit where the loss grows as the value falls (FTQ);
# never below 0.
loss_us <- function(x, base, us_per_unit, falling = FALSE) {
  pmax(if (falling) base - x else x - base, 0) * us_per_unit
}

# Rank i's JSON tails (tails.h), with the loss and histogram every kernel
# writes.
rank_tails <- function(run, i) {
  tails <- rank_entries(run, i)[[1]]$tails
  if (is.null(tails$loss)) no_tails(run)
  tails
}

no_tails <- function(run) {
  stop_input(run$path, paste("a rank's JSON entry has no tails.loss or tails.histogram:",
    "written by a noisebench older than its analysis; run it again"))
}

# Every rank's tails (tails.h) as the kernel wrote them, a row a rank: the
# figures of tail_table, its samples (its histogram's) and its measured
# time (loss.seconds); null (no samples to take a percentile of) is NA.
run_tails <- function(run) {
  figures <- c(paste0(names(tail_probs), "_us"), "max_us",
    paste0("above_", tail_thresholds_us, "us_per_hour"))
  seconds <- rank_values(run, "tails.loss.seconds")
  histogram <- rank_matrix(run, "tails.histogram.samples")
  # a rank's histogram is empty only if it had no samples (selfish: detours)
  taken <- rank_values(run, kernel_info(run$kernel)$samples_per_rank, 0)
  if (anyNA(seconds) || (ncol(histogram) == 0 && any(taken > 0))) no_tails(run)
  out <- data.table(samples = rowSums(histogram, na.rm = TRUE), seconds = seconds)
  for (f in figures) set(out, j = f, value = rank_values(run, paste0("tails.", f)))
  out[]
}

# The samples' loss in us, in sample order, and the rank's measured time in s.
sample_losses <- function(run, i, best = c("measured", "robust")) {
  m <- loss_model(run, i, best)
  list(us = m$f(m$x), seconds = m$seconds)
}

# One row per run and rank: p50 ... p99.99 and max of the loss (us), and
# above_<n>us_per_hour, as each rank's kernel measured them on all its
# samples (the JSON's tails, tails.h; selfish: on its detours, the only
# samples it records). No sample is read: a pass over every rank's samples
# would make the table's cost grow with the samples, not the ranks.
#' @rdname noise_summary
#' @export
tail_table <- function(runs) {
  rbindlist(lapply(names(runs), function(name) {
    run <- runs[[name]]
    cbind(data.table(run = name, kernel = run$kernel,
      host = thread_values(run, "host", ""), thread = thread_values(run, "unit", 0L),
      cpu = thread_values(run, "cpu", 0L)), run_tails(run))
  }))
}

# The k-th smallest of values given with their counts
table_kth <- function(values, freq, k) {
  o <- order(values)
  values[o][findInterval(k - 0.5, cumsum(freq[o])) + 1]
}

