# The tails: how bad the worst case is. For each run and rank, the time each
# sample lost to noise, in us: FWQ its excess over the fastest sample, P-SNAP
# over the ideal iteration, FTQ the missing work of a quantum as time (the
# share of the best quantum's count missing, times the quantum), selfish each
# detour beyond the minimal iteration. Its percentiles and maximum, and how
# often per hour of the run it passed 10 us, 100 us and 1 ms.

tail_probs <- c(p50 = 0.5, p99 = 0.99, p99_9 = 0.999, p99_99 = 0.9999)
tail_thresholds_us <- c(10, 100, 1000)

# The samples' loss in us and the rank's measured time in s. FTQ's best
# quantum is its largest count (Sequoia's), or with ftq_best = "robust" the
# 99.9th percentile of the counts: a few quanta run unusually fast when the
# timer read is most of a count, and the largest then moves from run to run.
sample_losses <- function(run, i, ftq_best = c("max", "robust")) {
  ftq_best <- match.arg(ftq_best)
  t <- run$threads[[i]]
  r <- (run$meta$ranks %||% run$meta$threads)[[i]]
  x <- noise_values(run, t$data)
  switch(run$kernel,
    fwq = list(us = (x - min(x)) / t$ticks_per_ns / 1e3, seconds = sum(x) / t$ticks_per_ns / 1e9),
    psnap = {
      ideal <- (r$ideal_us %||% (min(x) / 1e3)) * 1e3
      list(us = pmax(x - ideal, 0) / 1e3, seconds = sum(x) / 1e9)
    },
    ftq = {
      quantum_us <- run$meta$quantum_ns / 1e3
      best <- if (ftq_best == "max") max(x) else stats::quantile(x, 0.999, names = FALSE)
      list(us = pmax(best - x, 0) / best * quantum_us, seconds = length(x) * quantum_us / 1e6)
    },
    selfish = list(us = pmax(x - r$min_iteration_ns, 0) / 1e3, seconds = r$period_s)
  )
}

# One row per run and rank: p50 ... p99.99 and max of the loss (us), and
# above_<n>us_per_hour. Selfish's percentiles are those of its detours (it
# records nothing else); the others' of every sample.
tail_table <- function(runs) {
  rbindlist(lapply(names(runs), function(name) {
    run <- runs[[name]]
    rbindlist(lapply(seq_along(run$threads), function(i) {
      t <- run$threads[[i]]
      loss <- sample_losses(run, i)
      q <- measured_quantiles(loss$us, tail_probs)
      hours <- loss$seconds / 3600
      above <- vapply(tail_thresholds_us, function(th) sum(loss$us > th) / hours, numeric(1))
      row <- data.table(run = name, kernel = run$kernel, host = t$host, thread = t$unit,
        cpu = t$cpu, samples = length(loss$us), seconds = loss$seconds)
      row[, names(tail_probs) := as.list(q)]
      row[, max_us := if (length(loss$us)) max(loss$us) else NA_real_]
      row[, paste0("above_", tail_thresholds_us, "us_per_hour") := as.list(above)]
      setnames(row, names(tail_probs), paste0(names(tail_probs), "_us"))
      row[]
    }))
  }))
}

# Quantiles that were measured (type 1: the ceiling(n p)-th smallest value),
# NA without samples. data.table's parallel sort of the whole vector costs
# less than stats::quantile's partial one.
measured_quantiles <- function(x, probs) {
  if (length(x) == 0) return(rep(NA_real_, length(probs)))
  sorted <- data.table::fsort(as.double(x))
  sorted[pmax(1, ceiling(probs * length(sorted)))]
}
