# The spectral lines of a whole machine: every FTQ CPU found the strongest
# lines of its own counts in the job (the JSON's spectrum, the method of
# spectrum.R's find_peaks: docs/kernels.md), so which cores see a timer
# tick, a daemon's period or a node's own source is known without an FFT
# here, whatever the CPUs. A line common to every core is the system's
# (a tick, a housekeeping thread); one on a few nodes is theirs.

# The rows a run has on the report's page (lines.csv has every one)
machine_lines_shown <- 20

# One row per run and line: the CPUs' lines within the same cell of
# `cell_bins` frequency bins of the run's coarsest resolution (one source
# seen by many CPUs, on hosts whose clocks differ a little), strongest
# first by how many CPUs have it. frequency_hz is their median, cpus how many
# CPUs have it, cpus_percent of the run's CPUs, hosts on how many hosts;
# share_percent_median and _max over those CPUs (spectrum.R's share), worst
# the host:cpu of the largest; resolution_hz the bin; origin, partners and
# agreeing the two-frequency test's (machine_lines_origin). Runs without
# lines (FWQ, other kernels, a run from before the kernels found them) have
# no rows.
machine_lines <- function(runs, cell_bins = 3) {
  lines <- rbindlist(lapply(names(runs), function(name) {
    run <- runs[[name]]
    if (!fixed_time(kernel_info(run$kernel))) return(NULL)
    resolution <- rank_values(run, "spectrum.resolution_hz")
    if (all(is.na(resolution))) return(NULL)
    frequency <- rank_matrix(run, "spectrum.frequency_hz")
    share <- rank_matrix(run, "spectrum.share_percent")
    counts <- rowSums(!is.na(frequency))
    line <- !is.na(as.vector(t(frequency)))
    found <- data.table(
      host = rep(thread_values(run, "host", ""), counts),
      cpu = rep(thread_values(run, "cpu", 0L), counts),
      unit = rep(seq_len(rank_count(run)), counts),
      frequency_hz = as.vector(t(frequency))[line],
      share_percent = as.vector(t(share[, seq_len(ncol(frequency)), drop = FALSE]))[line]
    )
    if (nrow(found) == 0) return(NULL)
    width <- cell_bins * max(resolution, 0, na.rm = TRUE)
    found[, cell := round(frequency_hz / width)]
    out <- found[, .(
      frequency_hz = stats::median(frequency_hz),
      cpus = uniqueN(unit),
      hosts = uniqueN(host),
      share_percent_median = stats::median(share_percent),
      share_percent_max = max(share_percent),
      worst = paste0(host[which.max(share_percent)], ":", cpu[which.max(share_percent)])
    ), by = cell]
    out[, `:=`(cell = NULL, run = name, cpus_percent = 100 * cpus / rank_count(run),
      resolution_hz = width / cell_bins)]
    setcolorder(out, c("run", "frequency_hz", "cpus", "cpus_percent", "hosts"))
    out[order(-cpus, -share_percent_max)]
  }))
  machine_lines_origin(lines, runs)
}

# The two-frequency test (spectrum.R) on the machine's lines: a line of run
# a is external when a partner run (spectrum_partners: another sampling
# frequency) has one at the same Hz (folded into its band), an artifact of
# the benchmark when it has one where a fixed number of quanta would put it
# (f fs_b / fs_a), each within 3 of its bins or rel_tol; a partner's line
# counts when its median share is at least min_share of this one's (shares
# are of the time, comparable across sampling rates; sqrt(0.1): a tenth of
# the power, as classify_peaks asks). Up to 5 partners vote
# (vote_on_origin); origin unknown without one.
machine_lines_origin <- function(lines, runs, min_share = sqrt(0.1), rel_tol = 0.005) {
  if (nrow(lines) == 0) return(lines)
  timed <- runs_where(runs, fixed_time)
  rbindlist(lapply(split(lines, by = "run", sorted = FALSE), function(mine) {
    a <- mine$run[1]
    fs_a <- run_sampling_hz(timed[[a]]$meta)
    partners <- utils::head(intersect(spectrum_partners(timed, a), lines$run), 5)
    verdicts <- lapply(partners, function(b) {
      theirs <- lines[run == b]
      fs_b <- run_sampling_hz(timed[[b]]$meta)
      has <- function(f, share) {
        tol <- max(3 * theirs$resolution_hz[1], rel_tol * f)
        any(abs(theirs$frequency_hz - alias_hz(f, fs_b)) <= tol &
          theirs$share_percent_median >= min_share * share)
      }
      same <- mapply(has, mine$frequency_hz, mine$share_percent_median)
      moved <- mapply(has, mine$frequency_hz * fs_b / fs_a, mine$share_percent_median)
      data.table(origin = ifelse(same & !moved, "external",
        ifelse(moved & !same, "artifact", "unknown")), partner_hz = fs_b)
    })
    vote_on_origin(mine, verdicts)[, partner_hz := NULL]
  }))
}
