# Noise statistics of the Sequoia FWQ/FTQ analysis (the Octave analyze and
# wanalyze scripts) and the verdict of the requirements the kernels judged.

# The distinct values of whole numbers from 0 to `limit`, and how often each
# occurs; NULL for other samples. FTQ counts take a few thousand values over
# millions of quanta: sums over the table cost less than one temporary of
# the samples. Its cost is the largest value's, not the samples': a rank
# whose largest value passes `per_sample` times its samples is sorted
# instead (a 4 ms stall is 10^7 ticks; thousands of short ranks each
# tabulating that far would cost more than all their samples).
value_table <- function(x, limit = 1e7, per_sample = 4) {
  if (length(x) == 0) return(NULL)
  # min and max: range() is several times slower over millions of doubles
  hi <- max(x)
  if (min(x) < 0 || hi > limit || hi > per_sample * length(x) + 65536) return(NULL)
  freq <- tabulate(as.integer(x), hi)
  zeros <- length(x) - sum(freq)
  # doubles: value * freq overflows an integer (180 thousand ticks, 20
  # thousand times); only the values taken, not every one up to the largest
  value <- as.numeric(which(freq > 0))
  freq <- freq[value]
  if (zeros > 0) {
    value <- c(0, value)
    freq <- c(zeros, freq)
  }
  # as.integer truncates: a fraction anywhere makes the table's sum smaller
  if (sum(value * freq) != sum(x)) return(NULL)
  list(value = value, freq = freq)
}

# The best sample: the most work done in a quantum (FTQ), the shortest time
# for the work (FWQ, P-SNAP).
best_value <- function(x, kernel, table = NULL) {
  if (!is.null(table)) {
    return(if (falling(kernel_info(kernel))) table$value[length(table$value)] else
      table$value[1])
  }
  if (falling(kernel_info(kernel))) max(x) else min(x)
}

# The median CPU of a figure over CPUs: the place in x (NA ignored) of the
# CPU at its median, the lower of the two middle ones (quantile type 1), so
# that every table and sentence that says "the median CPU" names one CPU
# and its parts add up to its whole; NA where every value is.
median_cpu_at <- function(x) {
  o <- order(x, na.last = NA)
  if (length(o) == 0) return(NA_integer_)
  o[ceiling(length(o) / 2)]
}

# That CPU's value of x.
median_cpu <- function(x) x[median_cpu_at(x)]

# The median, from the value_table where there is one: faster than sorting
# millions of samples.
median_of <- function(x, table = value_table(x)) {
  if (is.null(table)) return(stats::median(x))
  cumulative <- cumsum(table$freq)
  half <- (cumulative[length(cumulative)] + 1) / 2
  (table$value[which.max(cumulative >= floor(half))] +
    table$value[which.max(cumulative >= ceiling(half))]) / 2
}

# Each rank's moments as its kernel computed them over all its samples (the
# JSON's stats of its value, src/lib/base/stats.h): those of its scaled
# noise, (x - best) / best for fixed work (FWQ, P-SNAP; best the minimum)
# and (best - x) / best for FTQ counts (best the maximum), under which
# kurtosis does not change and skewness changes sign; its best value and
# its mean. A row a rank.
run_moments <- function(run) {
  stat <- function(key) rank_values(run, paste0("stats.", key))
  falls <- falling(kernel_info(run$kernel))
  best <- stat(if (falls) "max" else "min")
  mean <- stat("mean")
  n <- rank_values(run, "samples")
  if (anyNA(mean) || anyNA(stat("std")) || anyNA(n)) {
    stop_input(run$path, paste("a rank's JSON entry has no stats {min, max, mean, std,",
      "kurtosis, skewness} or samples: written by a noisebench older than its analysis;",
      "run it again"))
  }
  # JSON has no NaN: a constant sample's kurtosis and skewness are null
  nan <- function(v) ifelse(is.na(v), NaN, v)
  data.table(best = best, mean = mean, samples = n,
    scaled_noise_mean = abs(mean - best) / best,
    scaled_noise_sd = ifelse(n > 1, stat("std") / best, NA_real_),
    kurtosis = nan(stat("kurtosis")),
    skewness = nan(if (falls) -stat("skewness") else stat("skewness")))
}

# Each rank's verdict as its kernel judged it by the run's requirements
# (src/lib/base/requirements.h): met (TRUE), not (FALSE) or NA where no rule
# spoke of its figures; and the rules not met, "rule; rule".
rank_verdicts <- function(run) {
  judged <- rank_values(run, "requirements.judged")
  unmet <- rank_values(run, "requirements.unmet")
  list(meets = ifelse(is.na(judged) | judged == 0, NA, unmet == 0),
    unmet_rules = ifelse(is.na(judged), NA_character_,
      rank_values(run, "requirements.unmet_rules", "")))
}

# The requirements' verdict of each group (`by`, columns of summary) of the
# judged threads: how many, how many did not meet them, the rules they did
# not meet and the verdict in words; one row a group, the words made for
# every group at once (a machine's 10^4 hosts).
requirements_verdicts <- function(summary, by = NULL) {
  judged <- summary[!is.na(meets)]
  if (nrow(judged) == 0) {
    return(data.table(threads = integer(), failing = integer(), meets = logical(),
      verdict = character()))
  }
  v <- judged[, .(threads = .N, failing = sum(!meets),
    rules = paste(unique(unlist(strsplit(unmet_rules[!meets], "; ", fixed = TRUE))),
      collapse = "; ")), by = by]
  v[, meets := failing == 0]
  v[, verdict := ifelse(meets,
    sprintf("met on all %s threads", format_number(threads)),
    sprintf("not met on %s of %s threads: %s", format_number(failing), format_number(threads),
      rule_words(rules)))]
  v[, rules := NULL][]
}

# Rules as the page gives them: each bound a number for people (0.000001,
# not the file's 1e-06); "rule; rule" in, the same out.
rule_words <- function(rules) {
  vapply(strsplit(rules, "; ", fixed = TRUE), function(each) {
    paste(vapply(strsplit(each, " ", fixed = TRUE), function(w) {
      bound <- suppressWarnings(as.numeric(w[3]))
      if (!is.na(bound)) w[3] <- format_number(bound)
      paste(w, collapse = " ")
    }, ""), collapse = "; ")
  }, "")
}

# The rules each run's ranks were judged by and where they came from (a
# site's file, or "default": the catalogue's, the Sequoia criteria); a row a
# run and rule.
requirements_table <- function(runs) {
  rbindlist(lapply(names(runs), function(n) {
    q <- runs[[n]]$meta$requirements
    if (is.null(q)) return(NULL)
    data.table(run = n, source = q$source, rule = as.character(unlist(q$rules)))
  }))
}

# Where the requirements came from, in words.
requirements_words <- function(requirements) {
  sources <- unique(requirements$source)
  if (length(sources) == 0) return("the requirements")
  named <- ifelse(sources == "default", "the default requirements (Sequoia's diminutive noise)",
    sprintf("the requirements of %s", sources))
  paste(named, collapse = " and ")
}

# The values each kernel's noise is measured on: sample ticks (FWQ), work
# counts (FTQ), iteration ns (P-SNAP).
noise_values <- function(run, data) data[[kernel_info(run$kernel)$value]]

# When each sample ended, in s from the start: fixed work's samples follow
# each other, fixed time's quanta carry their end tick (the catalogue's
# end_tick column). Ticks are each rank's own host's.
end_times <- function(run, t) {
  info <- kernel_info(run$kernel)
  if (fixed_time(info)) return((t$data[[info$end_tick]] - t$start_tick) / t$ticks_per_ns / 1e9)
  cumsum(t$data[[info$value]]) / values_per_ns(info, t$ticks_per_ns) / 1e9
}

# The per-sample scaled noise of every thread, with its time (for plots):
#   fwq, psnap  (t - min) / min
#   ftq         (max - count) / max: the share of the best quantum's work missing
noise_samples <- function(run) {
  run_long(run, function(d, t) {
    x <- noise_values(run, d)
    best <- best_value(x, run$kernel)
    data.table(value = x, noise = abs(x - best) / best, time_s = end_times(run, t))
  })
}

# The share of the machine lost, in %, from the sums of n values over a
# stretch: for fixed work (FWQ, P-SNAP) the time not spent on the work,
# sum(t - min) / sum(t); for FTQ the work missing against the best quantum.
lost_percent <- function(kernel, total, n, best) {
  share <- if (falling(kernel_info(kernel))) 1 - total / n / best else 1 - n * best / total
  100 * pmax(share, 0) # never below 0 but for rounding
}

# The time (ns) each rank's detours took beyond an ordinary iteration, of a
# kernel that records detours: the sum of its stretches (stretches.h).
detours_lost_ns <- function(run) rowSums(rank_matrix(run, "stretches.sum"), na.rm = TRUE)

# One row per run and thread (or rank): the moments of its scaled noise and
# the figure every table ranks it by, noise_percent: the headline, what the
# system stole (stolen_percent), the same for every kernel. A run written
# before the headline gives its kernel's older figure there: FWQ's and FTQ's
# loss against the best sample, P-SNAP's slowdown of the calibrated loop,
# 100 (mean - ideal) / ideal, selfish's time in detours beyond an ordinary
# iteration.
#' The report's tables
#'
#' The tables the report writes as CSV: each rank's noise (\code{noise_summary},
#' summary.csv), its share of time lost over the run (\code{noise_over_time}),
#' the tails of the loss per sample (\code{tail_table}, tails.csv), the
#' comparison of two surveys (\code{compare_table}, compare.csv), FTQ's
#' spectral lines (\code{peak_table}, peaks.csv), the predicted slowdown of
#' bulk-synchronous applications (\code{scale_table}, scale.csv), and the
#' acceptance summary of a ReFrame run (\code{acceptance_table}, and as
#' Markdown \code{acceptance_markdown}).
#'
#' @param run a run, as \code{\link{read_run}} returns it.
#' @param run_name its name in the table.
#' @param bins the number of stretches the run is cut into: the kernels write 100 a rank
#'   (\code{stretches_per_run}), \code{bins} must divide it.
#' @param best the reference sample: each rank's own best, or the run's.
#' @param runs,runs_a,runs_b named lists of runs, as \code{\link{read_results}} returns them.
#' @param keep \code{NULL} for every thread's spectrum, or a list by run name of the positions of
#'   the threads whose spectra to compute (the report passes those it shows in detail and their
#'   partners); runs not named keep every thread.
#' @param seed the seed of the bootstrap intervals.
#' @param simulate the names of the runs whose cells outside the analytic model noise-simulate
#'   replays; the others keep the model's figure there.
#' @param processes process counts to predict at besides \code{scale_processes} (the machine's
#'   own).
#' @param report_path ReFrame's JSON report (\code{--report-file}).
#' @param table a table from \code{acceptance_table}.
#' @return A \code{data.table}; \code{peak_table} a list of tables;
#' \code{acceptance_markdown} lines of text.
#' @order 1
#' @export
noise_summary <- function(run, run_name) {
  meta <- run$meta
  info <- kernel_info(run$kernel)
  place <- list(unit = thread_values(run, "unit", 0L), host = thread_values(run, "host", ""),
    cpu = thread_values(run, "cpu", 0L))
  rows <- if (records_detours(info)) {
    detours <- rank_values(run, "detours")
    stolen <- rank_values(run, "stolen_percent")
    if (anyNA(detours)) stop_input(run$path, "no \"detours\" in the run description")
    as.data.table(c(place, list(samples = detours, scaled_noise_mean = NA_real_,
      scaled_noise_sd = NA_real_, kurtosis = NA_real_, skewness = NA_real_,
      noise_percent = if (anyNA(stolen)) {
        100 * detours_lost_ns(run) / 1e9 / rank_values(run, "period_s")
      } else stolen)))
  } else {
    m <- run_moments(run)
    noise <- if (!anyNA(rank_values(run, "stolen_percent"))) {
      rank_values(run, "stolen_percent") # the headline, speed.h's
    } else if (!is.null(info$ideal)) {
      calib <- rank_values(run, info$ideal)
      calib <- ifelse(is.na(calib), rank_values(run, "calibrated_us",
        as.numeric(meta$granularity_us %||% NA_real_)), calib)
      100 * (m$mean / 1e3 - calib) / calib
    } else {
      lost_percent(run$kernel, m$mean * m$samples, m$samples, m$best)
    }
    setDT(c(place, m[, c("samples", "scaled_noise_mean", "scaled_noise_sd", "kurtosis",
      "skewness"), with = FALSE], list(noise_percent = noise)))
  }
  speed <- speed_figures(run)
  rows[, names(speed) := speed]
  place <- cpu_places(run)
  rows[, names(place) := place]
  verdict <- rank_verdicts(run)
  rows[, names(verdict) := verdict]
  rows[, `:=`(
    run = run_name, kernel = run$kernel,
    work = meta$work %||% NA_character_,
    sampling_hz = if (fixed_time(info)) run_sampling_hz(meta) else NA_real_,
    inject = unit_injects(run)
  )]
  setnames(rows, "unit", "thread")
  setcolorder(rows, c("run", "kernel", "host", "thread", "cpu", "samples", "scaled_noise_mean",
    "scaled_noise_sd", "kurtosis", "skewness", "noise_percent", "meets", "unmet_rules"))
  rows[]
}

# Where each rank's CPU sits (its JSON entry's numa_node and smt_thread; NA
# where sysfs did not say or the run predates them).
cpu_places <- function(run) {
  list(numa_node = rank_values(run, "numa_node"), smt_thread = rank_values(run, "smt_thread"))
}

# Each rank's injection (format_inject's, or "none"): its own, as the
# ranks of one MPMD job may differ; the run's in runs before ranks had one
# (no "machines" in the JSON).
unit_injects <- function(run) {
  if (is.null(run$meta$machines)) {
    return(rep(format_inject(run$meta$inject), rank_count(run)))
  }
  i <- rank_injects(run)
  ifelse(is.na(i$duration_us), "none", sprintf("%s:%s%s", i$period_us, i$duration_us,
    ifelse(i$pattern %in% "poisson", ":poisson", "")))
}

# Each rank's own injection (its entry's inject), NA where it had none
rank_injects <- function(run) {
  data.table(period_us = rank_values(run, "inject.period_us", NA_integer_),
    duration_us = rank_values(run, "inject.duration_us", NA_integer_),
    pattern = rank_values(run, "inject.pattern", NA_character_))
}

# What the kernel split its time into (src/lib/system/speed.h), per thread
# or rank: the headline, what the system stole (stolen_percent, with its 95%
# interval), and beside it the work's own: its slowdown below its best
# speed and its variation; their whole (lost_percent = stolen + slowdown +
# variation); the probe's resolution and whether it is coarser than the
# threshold; its CPU's steal time. NA where the kernel did not (older runs).
speed_figures <- function(run) {
  keys <- c("stolen_percent", "stolen_ci95_low", "stolen_ci95_high", "slowdown_percent",
    "variation_percent", "lost_percent", "resolution_us", "threshold_us", "coarse", "steal_ms")
  stats::setNames(lapply(keys, function(key) rank_values(run, key)), keys)
}
