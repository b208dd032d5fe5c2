# What a kernel computes of its samples and writes into its JSON, computed
# here for runs written without a kernel: the tests' synthetic runs, and the
# survey benchmark's (benchmarks/survey.R sources this file). The package
# reads these figures; it never computes them.

# A rank's stats as its kernel writes them (stats.h).
sample_stats <- function(x) {
  m <- noise_moments(x)
  list(min = min(x), max = max(x), mean = m$scaled_noise_mean, std = m$scaled_noise_sd,
    kurtosis = m$kurtosis, skewness = m$skewness)
}

# The rules the kernels judge by without --requirements, as the JSON names them.
default_requirements <- list(source = "default", rules = list(
  "scaled_noise_mean < 1e-06 kernel=fwq", "scaled_noise_sd < 0.001 kernel=fwq",
  "kurtosis < 100 kernel=fwq nan=pass"))

# The default requirements' verdict on FWQ ranks, as the kernel judges them
# (requirements.c, the catalogue's rules), from their stats (sample_stats:
# a value a rank): the Sequoia criteria on the scaled noise, a NaN kurtosis
# (a constant sample) meeting the last. A column a member of the entries'
# "requirements".
fwq_requirements_table <- function(stats) {
  mean <- (stats$mean - stats$min) / stats$min
  sd <- stats$std / stats$min
  k <- stats$kurtosis
  unmet <- cbind(!(mean < 1e-6), is.na(sd) | !(sd < 1e-3), !is.nan(k) & !(k < 100))
  rules <- unlist(default_requirements$rules)
  list(judged = rep(3L, length(mean)), unmet = rowSums(unmet),
    unmet_rules = apply(unmet, 1, function(u) paste(rules[u], collapse = "; ")))
}

# The same for one rank's samples x, as its entry holds it.
fwq_requirements <- function(x) {
  list(requirements = lapply(fwq_requirements_table(sample_stats(x)), `[`, 1))
}

# The stretches of one rank's samples, as the kernels reduce them
# (stretches.h): the samples that ended at end_s (s from the start) and
# their values, in stretches of run_s / stretches_per_run.
sample_stretches <- function(end_s, value, run_s) {
  width <- run_s / stretches_per_run
  k <- pmin(pmax(ceiling(end_s / width) - 1, 0), stretches_per_run - 1) + 1
  n <- tabulate(k, stretches_per_run)
  total <- vapply(split(as.numeric(value), factor(k, levels = seq_len(stretches_per_run))),
    sum, numeric(1), USE.NAMES = FALSE)
  used <- seq_len(max(c(0, which(n > 0))))
  list(width_s = width, n = n[used], sum = total[used])
}

# The tails of losses as tails.h defines them: type-1 percentiles (the
# ceiling(n p)-th smallest), the largest, and how many passed each
# threshold per hour of `seconds`.
loss_tails <- function(loss_us, seconds) {
  n <- length(loss_us)
  q <- measured_quantiles(loss_us, tail_probs)
  c(stats::setNames(as.list(q), paste0(names(tail_probs), "_us")),
    list(max_us = if (n) max(loss_us) else NA_real_),
    stats::setNames(lapply(tail_thresholds_us, function(th) sum(loss_us > th) / (seconds / 3600)),
      paste0("above_", tail_thresholds_us, "us_per_hour")))
}

# Ranks' entries as their node's ranks table (kernels.json's
# node_files.ranks_about, src/driver/ranks_table.c): a row an entry, its
# scalars in columns named by their paths, an array's elements by their
# place from 1, the columns in the order they first come.
ranks_table_rows <- function(entries) {
  flat <- function(x, path) {
    keys <- if (is.null(names(x))) as.character(seq_along(x)) else names(x)
    at <- if (nzchar(path)) paste0(path, ".", keys) else keys
    unlist(lapply(seq_along(x), function(k) {
      v <- x[[k]]
      if (is.list(v)) return(flat(v, at[k]))
      if (length(v) > 1) return(stats::setNames(as.list(v), paste0(at[k], ".", seq_along(v))))
      stats::setNames(list(if (is.null(v)) NA else v), at[k])
    }), recursive = FALSE)
  }
  data.table::rbindlist(lapply(entries, flat, path = ""), use.names = TRUE, fill = TRUE)
}
