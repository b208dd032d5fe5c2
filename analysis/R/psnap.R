# The P-SNAP tables of a PRACE Tier-0 assessment (as the PRACE benchmark
# reports give them): one row per run (nodes, tasks, calibration time, mean
# and standard deviation of the run time, OS noise %), and one per core count
# (system correlation, noise %, run-time SD) over every run with that many
# ranks. Beside PRACE's figures, what the noise was: the kernel's split of
# each rank's time into detours and running slow (means over the ranks), so
# that a slower CPU is not read as interruptions.

psnap_runs <- function(runs) {
  psnap <- Filter(function(r) r$kernel == "psnap", runs)
  rbindlist(lapply(names(psnap), function(name) {
    run <- psnap[[name]]
    ranks <- run$meta$ranks
    # from the ranks' stats of their iteration times, as the kernel computes
    # its summary: each rank's run time, and the calibration time of its
    # ideal iteration
    moments <- lapply(seq_along(ranks), function(i) rank_moments(run, i))
    totals <- vapply(moments, function(m) m$mean * m$moments$samples / 1e9, numeric(1))
    ideal_s <- vapply(seq_along(ranks), function(i) {
      ranks[[i]]$ideal_us * moments[[i]]$moments$samples / 1e6
    }, numeric(1))
    calibration <- mean(ideal_s)
    data.table(
      run = name,
      nodes = length(unique(vapply(ranks, function(r) r$host, character(1)))),
      tasks = length(ranks),
      calibration_time_s = calibration,
      mean_run_time_s = mean(totals),
      sd_run_time_s = if (length(totals) > 1) stats::sd(totals) else 0,
      os_noise_percent = 100 * (mean(totals) - calibration) / calibration,
      detour_percent = mean_of_ranks(ranks, "detour_percent"),
      slow_percent = mean_of_ranks(ranks, "slow_percent"),
      # PRACE's "system correlation": how much the other ranks are hit when
      # rank 0 is; a single rank correlates with itself
      system_correlation = if (length(ranks) > 1) {
        mean(vapply(ranks[-1], function(r) r$correlation, numeric(1)))
      } else {
        1
      }
    )
  }))
}

# The mean of a figure the kernel reported per rank; NA where it did not.
mean_of_ranks <- function(ranks, key) {
  mean(vapply(ranks, function(r) as.numeric(r[[key]] %||% NA_real_), numeric(1)))
}

psnap_by_cores <- function(run_table) {
  if (nrow(run_table) == 0) return(data.table())
  run_table[, .(
    runs = .N,
    calibration_time_s = mean(calibration_time_s),
    mean_run_time_s = mean(mean_run_time_s),
    system_correlation = mean(system_correlation),
    noise_percent = mean(os_noise_percent),
    detour_percent = mean(detour_percent),
    slow_percent = mean(slow_percent),
    run_time_sd_s = mean(sd_run_time_s)
  ), by = .(cores = tasks)][order(cores)]
}

# Iteration times over all ranks of all P-SNAP runs, in us.
psnap_iterations <- function(runs) {
  psnap <- Filter(function(r) r$kernel == "psnap", runs)
  rbindlist(lapply(names(psnap), function(name) {
    run_long(psnap[[name]], function(d, t) d[, .(run = name, us = ns / 1e3)])
  }))
}
