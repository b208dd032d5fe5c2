# Noise statistics of the Sequoia FWQ/FTQ analysis (the Octave analyze and
# wanalyze scripts) and the Sequoia RFP's "diminutive noise" verdict.

# (t - min) / min: how much longer than the best sample each sample took.
scaled_noise <- function(x) {
  m <- min(x)
  (x - m) / m
}

# Mean, standard deviation (n - 1, as Octave's std), and the moment
# kurtosis and skewness (m4 / m2^2, m3 / m2^1.5: a normal sample has
# kurtosis 3, not 0). A constant sample has no kurtosis or skewness: NaN.
noise_moments <- function(x) {
  n <- length(x)
  mu <- sum(x) / n
  d <- x - mu
  m2 <- sum(d^2) / n
  list(
    samples = n,
    scaled_noise_mean = mu,
    scaled_noise_sd = if (n > 1) sqrt(m2 * n / (n - 1)) else NA_real_,
    kurtosis = if (m2 > 0) (sum(d^4) / n) / m2^2 else NaN,
    skewness = if (m2 > 0) (sum(d^3) / n) / m2^1.5 else NaN
  )
}

# Sequoia's limits: a thread, or a node over all its threads, shows
# diminutive noise when the largest mean, sd and kurtosis of its scaled noise
# stay below these.
sequoia_limits <- c(mean = 1e-6, sd = 1e-3, kurtosis = 100)

is_diminutive <- function(mean, sd, kurtosis) {
  # a constant sample (kurtosis NaN) has no tail at all
  k <- ifelse(is.nan(kurtosis), 0, kurtosis)
  mean < sequoia_limits[["mean"]] & sd < sequoia_limits[["sd"]] &
    k < sequoia_limits[["kurtosis"]]
}

node_verdict <- function(stats) {
  fwq <- stats[kernel == "fwq"]
  if (nrow(fwq) == 0) {
    return(list(diminutive = NA, text = "no FWQ run: the Sequoia criteria need one"))
  }
  worst <- c(
    mean = max(fwq$scaled_noise_mean), sd = max(fwq$scaled_noise_sd),
    kurtosis = max(fwq$kurtosis, na.rm = TRUE)
  )
  if (!is.finite(worst[["kurtosis"]])) worst[["kurtosis"]] <- 0
  ok <- is_diminutive(worst[["mean"]], worst[["sd"]], worst[["kurtosis"]])
  list(
    diminutive = ok, worst = worst,
    text = sprintf(
      "%s: over %d FWQ threads the largest scaled-noise mean is %.3g (limit %g), sd %.3g (limit %g), kurtosis %.3g (limit %g)",
      if (ok) "diminutive noise" else "not diminutive", nrow(fwq), worst[["mean"]],
      sequoia_limits[["mean"]], worst[["sd"]], sequoia_limits[["sd"]], worst[["kurtosis"]],
      sequoia_limits[["kurtosis"]]
    )
  )
}

# The per-sample noise of each kernel, on one scale (0 = no noise), with the
# time each sample ended, in seconds from the start:
#   fwq    (t - min) / min of the sample times
#   ftq    (max - count) / max: the share of the best quantum's work missing
#   psnap  (t - min) / min of the iteration times
noise_samples <- function(run) {
  s <- run$samples
  tpn <- run$meta$ticks_per_ns
  out <- switch(run$kernel,
    fwq = s[, .(unit, cpu, host, value = ticks, end_s = ticks / tpn / 1e9)],
    psnap = s[, .(unit, cpu, host, value = ns, end_s = ns / 1e9)],
    ftq = s[, .(unit, cpu, host, value = count, end_s = (tick - run$meta$start_tick) / tpn / 1e9)],
    stop("noise_samples: no per-sample noise for ", run$kernel)
  )
  if (run$kernel == "ftq") {
    out[, noise := (max(value) - value) / max(value), by = unit]
    setnames(out, "end_s", "time_s")
  } else {
    out[, `:=`(noise = scaled_noise(value), time_s = cumsum(end_s)), by = unit]
    out[, end_s := NULL]
  }
  out[]
}

# The share of the machine lost, in %: for fixed work (FWQ, P-SNAP) the time
# not spent on the work, sum(t - min) / sum(t); for FTQ the work missing
# against the best quantum.
lost_percent <- function(kernel, noise) {
  if (kernel == "ftq") 100 * mean(noise) else 100 * sum(noise) / sum(1 + noise)
}

# One row per run and thread (or rank): the moments of its scaled noise and
# the share of the machine it lost, as noise_percent (lost_percent; for
# P-SNAP its own slowdown of the calibrated loop, 100 (mean - calib) / calib;
# for selfish the time in detours, Netgauge's CPU overhead).
noise_summary <- function(run, run_name) {
  meta <- run$meta
  if (run$kernel == "selfish") {
    rows <- rbindlist(lapply(meta$ranks, function(r) {
      data.table(
        unit = r$rank, cpu = r$cpu, samples = r$detours,
        scaled_noise_mean = NA_real_, scaled_noise_sd = NA_real_, kurtosis = NA_real_,
        skewness = NA_real_, noise_percent = r$cpu_overhead_percent
      )
    }))
  } else {
    ns <- noise_samples(run)
    rows <- ns[, c(list(cpu = cpu[1]), noise_moments(noise),
      list(noise_percent = lost_percent(run$kernel, noise))),
    by = unit
    ]
    if (run$kernel == "psnap") {
      rows[, noise_percent := vapply(meta$ranks, function(r) {
        calib <- r$calibrated_us %||% meta$granularity_us
        100 * (r$mean_us - calib) / calib
      }, numeric(1))]
    }
  }
  rows[, `:=`(
    run = run_name, kernel = run$kernel,
    diminutive = if (run$kernel == "fwq") {
      is_diminutive(scaled_noise_mean, scaled_noise_sd, kurtosis)
    } else {
      NA
    },
    work = meta$work %||% NA_character_,
    sampling_hz = meta$frequency_hz %||% NA_real_,
    inject = format_inject(meta$inject)
  )]
  setnames(rows, "unit", "thread")
  setcolorder(rows, c("run", "kernel", "thread", "cpu", "samples", "scaled_noise_mean",
    "scaled_noise_sd", "kurtosis", "skewness", "noise_percent", "diminutive"))
  rows[]
}

# Noise per thread and time bin, for the heat map: lost_percent of each bin;
# selfish: the share of the bin's time detours took beyond an ordinary
# iteration (the CPU overhead), by the bin they started in.
noise_over_time <- function(run, bins = 100) {
  if (run$kernel == "selfish") {
    s <- run$samples
    ranks <- run$meta$ranks
    min_ns <- setNames(vapply(ranks, function(r) r$min_iteration_ns, numeric(1)),
      vapply(ranks, function(r) r$rank, numeric(1)))
    width <- max(vapply(ranks, function(r) r$period_s, numeric(1))) / bins
    out <- s[, .(noise_percent = 100 * sum(length_ns - min_ns[as.character(unit)]) / 1e9 / width),
      by = .(unit, cpu, bin = pmin(floor(start_ns / 1e9 / width), bins - 1))
    ]
  } else {
    ns <- noise_samples(run)
    width <- max(ns$time_s) / bins
    out <- ns[, .(noise_percent = lost_percent(run$kernel, noise)),
      by = .(unit, cpu, bin = pmin(floor(time_s / width), bins - 1))
    ]
  }
  out[, time_s := (bin + 0.5) * width][]
}
