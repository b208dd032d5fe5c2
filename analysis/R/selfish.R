# The selfish detour view (Netgauge): how much of each core the detours took,
# how often they came, how long they were, and when.

selfish_table <- function(runs) {
  selfish <- Filter(function(r) r$kernel == "selfish", runs)
  rbindlist(lapply(names(selfish), function(name) {
    run <- selfish[[name]]
    detours <- rank_values(run, "detours")
    if (anyNA(detours)) stop_input(run$path, "no \"detours\" in the run description")
    period <- rank_values(run, "period_s")
    min_iteration_ns <- rank_values(run, "min_iteration_ns")
    data.table(
      run = name, rank = rank_values(run, "rank", NA_integer_),
      host = rank_values(run, "host", NA_character_), cpu = rank_values(run, "cpu", NA_integer_),
      min_iteration_ns = min_iteration_ns,
      detours = detours,
      period_s = period,
      detours_per_s = detours / period,
      # Netgauge's CPU overhead: the time detours took beyond an ordinary
      # iteration, over the time measured
      cpu_overhead_percent = 100 * detours_lost_ns(run) / 1e9 / period,
      median_detour_us = ifelse(detours > 0, rank_values(run, "median_detour_ns") / 1e3,
        NA_real_),
      # the longest detour's loss (tails) and the iteration it lost it against
      max_detour_us = ifelse(detours > 0, run_tails(run)$max_us + min_iteration_ns / 1e3,
        NA_real_)
    )
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

# The report's selfish plot (the catalogue's plots): detour lengths, a
# panel a run.
detours_plot <- function(dir, runs, summary, label) {
  chosen <- panel_runs(Filter(function(n) runs[[n]]$kernel == "selfish", names(runs)), summary)
  d <- rbindlist(lapply(chosen, function(n) {
    run <- detail_run(runs[[n]], summary[run == n]$noise_percent)
    selfish_detours(setNames(list(run), n))[, run := label(n)]
  }))
  if (nrow(d) == 0) return(NULL)
  bins <- bin_counts(d$length_us, d$run, log_breaks(min(d$length_us), max(d$length_us), 10))
  bins[, label := factor(label, levels = unique(d$run))]
  p <- plot_bins(bins) + ggplot2::scale_x_log10(labels = format_number) +
    ggplot2::facet_wrap(~label, ncol = 2) +
    ggplot2::labs(title = "selfish detour lengths",
      x = "detour length (\u00b5s), bins of 1/10 decade", y = "detours") + theme_noise()
  fig(save_plot(p, dir, "detours", height = 1.5 + 1.6 * ceiling(length(chosen) / 2)),
    paste("Selfish detour, a panel a run: how many detours (y) of each length (us, log) the",
      "loop recorded on the CPUs shown in detail. Clusters are sources: the timer tick,",
      "interrupts, the hypervisor; their length is what a process loses each time.",
      panels_note(chosen)))
}
