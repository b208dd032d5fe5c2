# The selfish detour view (Netgauge): how much of each core the detours took,
# how often they came, how long they were, and when.

selfish_table <- function(runs) {
  selfish <- Filter(function(r) r$kernel == "selfish", runs)
  rbindlist(lapply(names(selfish), function(name) {
    run <- selfish[[name]]
    rbindlist(lapply(seq_along(run$threads), function(i) {
      r <- run$meta$ranks[[i]]
      detours <- as.numeric(json_field(r, "detours", run$path))
      period <- r$period_s
      data.table(
        run = name, rank = r$rank, host = r$host, cpu = r$cpu,
        min_iteration_ns = r$min_iteration_ns,
        detours = detours,
        period_s = period,
        detours_per_s = detours / period,
        # Netgauge's CPU overhead: the time detours took beyond an ordinary
        # iteration, over the time measured
        cpu_overhead_percent = 100 * selfish_lost_ns(run, i) / 1e9 / period,
        median_detour_us = if (detours) r$median_detour_ns / 1e3 else NA_real_,
        # the longest detour's loss (tails) and the iteration it lost it against
        max_detour_us = if (detours) {
          rank_tails(run, i)$max_us + r$min_iteration_ns / 1e3
        } else {
          NA_real_
        }
      )
    }))
  }))
}

# The time (ns) rank i's detours took beyond an ordinary iteration: the sum
# of its stretches (the kernel's, stretches.h).
selfish_lost_ns <- function(run, i) sum(as.numeric(unlist(rank_stretches(run, i)$sum)))

selfish_detours <- function(runs) {
  selfish <- Filter(function(r) r$kernel == "selfish", runs)
  rbindlist(lapply(names(selfish), function(name) {
    run_long(selfish[[name]], function(d, t) {
      d[, .(run = name, start_s = start_ns / 1e9, length_us = length_ns / 1e3)]
    })
  }))
}
