# Numbers and headers as a reader wants them: 3 significant digits,
# thousands separators, no e-notation, no trailing zeros ("12,300",
# "0.0412", "1.5"), and each column named in words with its unit. The CSV
# files keep every digit and the column names scripts use.

# x: numbers; "" where NA. Integers of any size keep every digit.
format_number <- function(x, digits = 3) {
  out <- character(length(x))
  ok <- is.finite(x)
  v <- x[ok]
  whole <- v == round(v) & abs(v) >= 10^(digits - 1)
  v[!whole] <- signif(v[!whole], digits)
  # the decimals that keep `digits` significant ones, none for whole numbers
  decimals <- ifelse(whole | v == 0, 0, pmax(0, digits - 1 - floor(log10(abs(v)))))
  s <- character(length(v))
  for (d in unique(decimals)) {
    at <- decimals == d
    s[at] <- scales::number(v[at], accuracy = 10^-d, big.mark = ",")
  }
  # 1.50 -> 1.5, 2.00 -> 2
  s <- sub("(\\.[0-9]*?)0+$", "\\1", s)
  out[ok] <- sub("\\.$", "", s)
  out[is.infinite(x)] <- ifelse(x[is.infinite(x)] > 0, "\u221e", "-\u221e")
  out
}

# A cell as text: numbers formatted, TRUE/FALSE as yes/no, NA as nothing.
format_cell <- function(x) {
  if (is.numeric(x)) return(format_number(x))
  if (is.logical(x)) return(ifelse(is.na(x), "", ifelse(x, "yes", "no")))
  ifelse(is.na(x), "", as.character(x))
}

# The words a column is headed by on the page, with its unit. One place for
# every table: a column not named here keeps its name, underscores as spaces.
column_words <- c(
  label = "Run", run = "Run", kernel = "Kernel", work = "Work", host = "Host",
  hosts = "Hosts", cpu = "CPU", cpus = "CPUs", unit = "Rank", thread = "Rank", ranks = "Ranks",
  samples = "Samples", inject = "Injected", sampling_hz = "Sampling (Hz)",
  noise_percent = "System took (%)", noise_median_percent = "System took, median CPU (%)",
  noise_p99_percent = "System took, p99 CPU (%)", noise_max_percent = "System took, worst CPU (%)",
  slowdown_median_percent = "Work's slowdown, median CPU (%)",
  stolen_median_percent = "System took, median CPU (%)",
  lost_median_percent = "Lost in all, median CPU (%)",
  variation_median_percent = "Work's own variation, median CPU (%)",
  stolen_max_percent = "System took, worst CPU (%)",
  slowdown_percent = "Work's slowdown (%)", stolen_ci95_low = "System took, 95% low (%)",
  stolen_ci95_high = "System took, 95% high (%)", resolution_us = "Resolution (\u00b5s)",
  coarse = "Coarser than the threshold", stopped_by = "Stopped by",
  stolen_percent = "System took (%)", variation_percent = "Work's own variation (%)",
  lost_percent = "Lost in all (%)",
  p99_9_us_median = "p99.9 loss, median CPU (\u00b5s)", p99_9_us_p99 = "p99.9 loss, p99 CPU (\u00b5s)",
  max_us = "Longest loss (\u00b5s)", p50_us = "Median loss (\u00b5s)", p99_us = "p99 loss (\u00b5s)",
  p99_9_us = "p99.9 loss (\u00b5s)", p99_99_us = "p99.99 loss (\u00b5s)",
  above_10us_per_hour = "Losses > 10 \u00b5s per hour", above_100us_per_hour = "Losses > 100 \u00b5s per hour",
  above_1000us_per_hour = "Losses > 1 ms per hour", typical_percent = "Typical stretch lost (%)",
  others_median_percent = "Others' median (%)", others_mad_percent = "Others' MAD (%)",
  robust_z = "Robust z", outlier = "Outlier", level = "Level", why = "Why",
  meets = "Met", unmet_rules = "Rules not met", verdict = "Verdict", threads = "Threads",
  scaled_noise_mean = "Scaled noise, mean", scaled_noise_sd = "Scaled noise, SD",
  kurtosis = "Kurtosis", skewness = "Skewness", steal_ms = "Steal (ms)",
  frequency_hz = "Frequency (Hz)", power = "Power (counts\u00b2)", share_percent = "Share (%)",
  origin = "Origin", above_floor = "Above floor (x)", partner_run = "Partner run",
  class = "Cause", detours = "Detours", total_us = "Time (\u00b5s)",
  longest_us = "Longest (\u00b5s)", phase_us = "Phase (\u00b5s)", processes = "Processes",
  mode = "Mode", slowdown = "Slowdown (x)", phases_hit_percent = "Phases hit (%)",
  source = "From", cores = "Cores", cpus_online = "CPUs online", smt = "SMT threads a core",
  numa_nodes = "NUMA nodes", virtual_machine = "Virtual machine", isolcpus = "isolcpus",
  nohz_full = "nohz_full", architecture = "Architecture", clocksource = "Clock source",
  calibration_s = "Calibration (s)", mean_s = "Mean run time (s)", sd_s = "SD (s)",
  os_noise_percent = "OS noise (%)", correlation = "Correlation with rank 0",
  cpus_percent = "CPUs (%)", share_median_percent = "Share, median (%)",
  share_max_percent = "Share, largest (%)", worst = "Worst CPU",
  lost_samples = "Samples dropped", seconds = "Seconds", complete = "Complete",
  what = "What", figure = "Figure", a = "A", b = "B", difference = "B - A",
  ci_low = "95% CI low", ci_high = "95% CI high", finding = "Finding",
  knob = "What moves it off the measured CPUs", setting = "On this machine now",
  action = "Action now", role = "CPUs for",
  docs = "Documentation", share_of_detours_percent = "Share of the detours (%)",
  cpus_affected = "CPUs", name = "Seen as", directory = "Directory", scope = "Level",
  system_correlation = "Correlation with rank 0", run_time_sd_s = "Run time SD (s)",
  sd_run_time_s = "Run time SD (s)", mean_run_time_s = "Mean run time (s)",
  calibration_time_s = "Calibration (s)", detours_per_s = "Detours per s", item = "Item", differs = "Differs", value = "Value"
)

# A name not in column_words: its unit suffix as a unit, "p99_us" "p99 (µs)".
header_words <- function(names) {
  words <- unname(column_words[names])
  units <- c(us = "\u00b5s", ms = "ms", s = "s", ns = "ns", hz = "Hz", percent = "%",
    mib = "MiB")
  suffix <- sub(".*_", "", names)
  has_unit <- grepl("_", names) & suffix %in% names(units)
  base <- ifelse(has_unit, sub("_[^_]*$", "", names), names)
  plain <- gsub("_", " ", base)
  plain <- paste0(toupper(substr(plain, 1, 1)), substring(plain, 2))
  plain <- ifelse(has_unit, sprintf("%s (%s)", plain, units[suffix]), plain)
  ifelse(is.na(words), plain, words)
}

# The table a page shows: columns empty in every row left out.
drop_empty_columns <- function(dt) {
  keep <- vapply(dt, function(x) !all(is.na(x) | (is.character(x) & !nzchar(x))), TRUE)
  dt[, names(dt)[keep], with = FALSE]
}
