# Results directories written the way the kernels write them, from samples
# whose noise is known.

write_json_run <- function(dir, prefix, meta) {
  text <- jsonlite::toJSON(meta, auto_unbox = TRUE, null = "null", na = "null", digits = NA,
    pretty = TRUE)
  writeLines(text, file.path(dir, paste0(prefix, ".json")))
}

synthetic_machine <- list(hostname = "synth", arch = "x86_64", cpu_model = "test CPU",
  cpus_online = 2, cores = 2, smt = 1, numa_nodes = 1, kernel_release = "6.1",
  kernel_cmdline = "quiet", isolcpus = "", nohz_full = "", clocksource = "tsc",
  virtual_machine = FALSE)

common_meta <- function(kernel, tpn = 1) {
  list(noisebench_version = "0.1.0", kernel = kernel, complete = TRUE, timer = "rdtsc",
    ticks_per_ns = tpn, calibration = list(timer_read_ns = 20, timer_resolution_ns = 20),
    machine = synthetic_machine, inject = NULL)
}

# A rank's tails as the kernels write them (the JSON's tails, tails.h): the
# loss of each of its values x (loss_us), its percentiles and rates, how
# many samples (the histogram in one bucket: these tests read its sum only).
loss_entry <- function(x, base, us_per_unit, seconds, falling = FALSE) {
  us <- loss_us(x, base, us_per_unit, falling)
  list(tails = c(loss_tails(us, seconds),
    list(loss = list(base = base, us_per_unit = us_per_unit, falling = falling,
      seconds = seconds), histogram = list(samples = length(us), lost_ns = sum(us) * 1e3))))
}

# A rank's stretches as the kernels write them (stretches.h): its samples
# that ended at end_s, their values, in a run whose longest rank took run_s.
stretches_entry <- function(end_s, value, run_s) {
  list(stretches = sample_stretches(end_s, value, run_s))
}

write_column <- function(path, ...) fwrite(data.table(...), path, sep = " ", col.names = FALSE)

# A rank's entry; hosts: one per rank, or NULL for the machine's; cpus: one
# per rank, or NULL for the rank's number.
rank_entry <- function(t, hosts, cpus, ...) {
  e <- list(rank = t, cpu = if (is.null(cpus)) t else cpus[[t + 1]], ...)
  if (!is.null(hosts)) e$host <- hosts[[t + 1]]
  e
}

# ticks: one vector of sample times per rank; fields: NULL or a list per
# rank of the further figures its entry holds (stolen_percent, ...).
write_fwq <- function(dir, prefix, ticks, tpn = 1, hosts = NULL, cpus = NULL, fields = NULL) {
  run_s <- max(vapply(ticks, sum, numeric(1))) / tpn / 1e9
  ranks <- lapply(seq_along(ticks) - 1, function(t) {
    file <- sprintf("%s_%d_times.dat", prefix, t)
    write_column(file.path(dir, file), ticks[[t + 1]])
    x <- ticks[[t + 1]]
    c(rank_entry(t, hosts, cpus, samples = length(x), files = list(file),
      stats = sample_stats(x)),
      loss_entry(x, min(x), 1 / tpn / 1e3, sum(x) / tpn / 1e9),
      stretches_entry(cumsum(as.numeric(x)) / tpn / 1e9, x, run_s), fwq_requirements(x),
      fields[[t + 1]])
  })
  write_json_run(dir, prefix, c(common_meta("fwq", tpn), list(work = "multiiter",
    requirements = default_requirements, ranks = ranks)))
}

# counts: one vector of work counts per thread, quanta of 1 / fs s; bits:
# the quantum set as ftq -i BITS sets it (no frequency_hz in the JSON).
write_ftq <- function(dir, prefix, counts, fs, tpn = 1, inject = NULL, bits = NULL,
                      hosts = NULL, cpus = NULL) {
  quantum <- 1e9 / fs * tpn
  ranks <- lapply(seq_along(counts) - 1, function(t) {
    c_file <- sprintf("%s_%d_counts.dat", prefix, t)
    t_file <- sprintf("%s_%d_times.dat", prefix, t)
    write_column(file.path(dir, c_file), counts[[t + 1]])
    write_column(file.path(dir, t_file), 1e6 + seq_along(counts[[t + 1]]) * quantum)
    x <- counts[[t + 1]]
    c(rank_entry(t, hosts, cpus, samples = length(x), files = list(c_file, t_file),
      stats = sample_stats(x), spectrum = spectrum_entry(x, fs)),
      loss_entry(x, max(x), 1e6 / fs / max(x), length(x) / fs, falling = TRUE),
      stretches_entry(seq_along(x) / fs, x, max(lengths(counts)) / fs))
  })
  meta <- c(common_meta("ftq", tpn), list(work = "multiiter", quantum_ns = 1e9 / fs,
    quantum_ticks = quantum, start_tick = 1e6, ranks = ranks))
  if (is.null(bits)) meta$frequency_hz <- fs else meta$interval_bits <- bits
  meta$inject <- inject
  write_json_run(dir, prefix, meta)
}

# A rank's spectral lines as the kernel finds them (spectrum.h: the
# report's method and as many lines), as columns.
spectrum_entry <- function(x, fs) {
  spec <- counts_spectrum(x, fs)
  lines <- find_peaks(spec)
  segment <- round(fs / spec$frequency_hz[1])
  list(resolution_hz = spec$frequency_hz[1], segments = length(x) %/% segment,
    segment = segment, frequency_hz = I(lines$frequency_hz), power = I(lines$power),
    above_floor = I(lines$ratio),
    share_percent = I(line_share_percent(lines$power, stats::median(x), max(x))))
}

# ns: one vector of iteration times per rank; the ideal iteration, as the
# kernel takes it, is the faster of the calibrated one and the run's fastest.
# The run's summary figures are written as -1 (the analysis computes its own
# from the ranks' stats, tails and stretches, written as the kernel writes
# them); a test that read them would fail.
write_psnap <- function(dir, prefix, ns, correlation = rep(0, length(ns)),
                        calibrated_us = 1000, hosts = rep("synth", length(ns))) {
  ideal_us <- pmin(calibrated_us, vapply(ns, min, numeric(1)) / 1e3)
  ranks <- lapply(seq_along(ns) - 1, function(r) {
    file <- sprintf("%s_%d_times.dat", prefix, r)
    write_column(file.path(dir, file), ns[[r + 1]])
    c(list(rank = r, host = hosts[r + 1], cpu = r, files = list(file),
      samples = length(ns[[r + 1]]), calibrated_us = calibrated_us, ideal_us = ideal_us[r + 1],
      total_time_us = sum(ns[[r + 1]]) / 1e3,
      mean_us = -1, correlation = correlation[r + 1], stats = sample_stats(ns[[r + 1]])),
      loss_entry(ns[[r + 1]], ideal_us[r + 1] * 1e3, 1e-3, sum(ns[[r + 1]]) / 1e9),
      stretches_entry(cumsum(as.numeric(ns[[r + 1]])) / 1e9, ns[[r + 1]],
        max(vapply(ns, sum, numeric(1))) / 1e9))
  })
  write_json_run(dir, prefix, c(common_meta("psnap"), list(work = "multiiter",
    granularity_us = 1000, reps = length(ns[[1]]),
    iteration_histogram = iteration_histogram(unlist(ns)),
    summary = list(ranks = length(ns), calibration_time_s = -1, mean_run_time_s = -1,
      sd_run_time_s = -1, os_noise_percent = -1, max_correlation = max(correlation[-1], 0)),
    ranks = ranks)))
}

# The kernel's iteration_histogram of iteration times ns, in buckets of 1 us
# below 4 granularities of 1000 us.
iteration_histogram <- function(ns) {
  bucket <- floor(ns / 1e3)
  inside <- bucket[bucket < 4000]
  first <- if (length(inside)) min(inside) else 0
  list(bucket_us = 1, first_us = first, counts = tabulate(inside - first + 1),
    overflow = sum(bucket >= 4000), overflow_from_us = 4000)
}

# detours: one data.table(start_ns, length_ns) per rank; the CPU overhead the
# kernel computes from them is written as -1: the analysis sums the
# stretches.
write_selfish <- function(dir, prefix, detours, period_s, min_ns = 10) {
  ranks <- lapply(seq_along(detours) - 1, function(r) {
    file <- sprintf("%s_%d_detours.dat", prefix, r)
    d <- detours[[r + 1]]
    fwrite(d, file.path(dir, file), sep = " ", col.names = FALSE)
    c(list(rank = r, host = "synth", cpu = r, files = list(file), detours = nrow(d),
      min_iteration_ns = min_ns, period_s = period_s, cpu_overhead_percent = -1,
      median_detour_ns = if (nrow(d)) stats::median(d$length_ns)),
      loss_entry(d$length_ns, min_ns, 1e-3, period_s),
      stretches_entry(d$start_ns / 1e9, d$length_ns - min_ns, period_s))
  })
  write_json_run(dir, prefix, c(common_meta("selfish"), list(ranks = ranks)))
}

# FTQ counts with a hit every `every` quanta and noise of sd `sd` around 1000.
impulse_counts <- function(n, every, depth = 500, phase = 0, sd = 2) {
  x <- 1000 + stats::rnorm(n, sd = sd)
  hit <- (seq_len(n) - 1 + phase) %% every == 0
  x[hit] <- x[hit] - depth
  round(x)
}

# n FWQ samples of 1000 ticks, a `share` of the time lost in bursts of 20
# samples three times as long, spread over the run.
fwq_ticks <- function(n, share, seed) {
  set.seed(seed)
  x <- 1000 + stats::rpois(n, 2)
  if (share > 0) {
    # a burst of k samples at 3000 ticks adds 2000 k: find the k per 200
    per <- round(share * 200 * 1000 / (2000 * (1 - share)))
    for (start in seq(1, n - 200, by = 200)) x[start:(start + per - 1)] <- 3000
  }
  x
}

# A results directory with every kernel, its noise known, through the whole
# report.
synthetic_results <- function(env = parent.frame()) {
  dir <- withr_tempdir(env)
  set.seed(5)
  ticks <- rep(1000, 5000)
  ticks[seq(1, 5000, by = 100)] <- 2000
  write_fwq(dir, "fwq", list(ticks, rep(1000, 5000)))
  inject <- list(period_us = 2000, duration_us = 100)
  hits <- function(n, every) impulse_counts(n, every, sd = 0)
  write_ftq(dir, "ftq_10khz", list(hits(20000, 20), hits(20000, 20)), 10000, inject = inject)
  write_ftq(dir, "ftq_7khz", list(hits(14000, 14), hits(14000, 14)), 7000, inject = inject)
  write_psnap(dir, "psnap", list(rep(1e6, 100) + stats::rexp(100, 1e-3),
    rep(1e6, 100) + stats::rexp(100, 1e-3)), correlation = c(1, 0.1))
  write_selfish(dir, "selfish", list(data.table(start_ns = 1e6 * 1:100, length_ns = 5000),
    data.table(start_ns = 2e6 * 1:50, length_ns = 9000)), period_s = 0.2)
  dir
}
