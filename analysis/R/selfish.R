# The selfish detour view (Netgauge): how much of each core the detours took,
# how often they came, how long they were, and when.

selfish_table <- function(runs) {
  selfish <- Filter(function(r) r$kernel == "selfish", runs)
  rbindlist(lapply(names(selfish), function(name) {
    run <- selfish[[name]]
    rbindlist(lapply(seq_along(run$threads), function(i) {
      r <- run$meta$ranks[[i]]
      d <- run$threads[[i]]$data
      period <- r$period_s
      data.table(
        run = name, rank = r$rank, host = r$host, cpu = r$cpu,
        min_iteration_ns = r$min_iteration_ns,
        detours = nrow(d),
        period_s = period,
        detours_per_s = nrow(d) / period,
        # Netgauge's CPU overhead: the time detours took beyond an ordinary
        # iteration, over the time measured
        cpu_overhead_percent = 100 * sum(d$length_ns - r$min_iteration_ns) / 1e9 / period,
        median_detour_us = if (nrow(d)) stats::median(d$length_ns) / 1e3 else NA_real_,
        max_detour_us = if (nrow(d)) max(d$length_ns) / 1e3 else NA_real_
      )
    }))
  }))
}

selfish_detours <- function(runs) {
  selfish <- Filter(function(r) r$kernel == "selfish", runs)
  rbindlist(lapply(names(selfish), function(name) {
    run_long(selfish[[name]], function(d, t) {
      d[, .(run = name, start_s = start_ns / 1e9, length_us = length_ns / 1e3)]
    })
  }))
}
