# Reserved cores: the CPUs a site keeps for the system (Frontier's core 0
# and Slurm's -S 8, Aurora's cores 0 and 52), given to the kernels with
# --housekeeping and recorded as the run's housekeeping_cpus. The report
# judges them apart from the application's: do the reserved cores take the
# noise, and how much is left on the application cores.

# The housekeeping CPUs of a run, or integer() when it names none.
run_housekeeping <- function(run) as.integer(unlist(run$meta$housekeeping_cpus))

# summary with a column role ("application" or "housekeeping") where any
# run names housekeeping CPUs; as it is otherwise.
with_roles <- function(summary, runs) {
  hk <- lapply(runs, run_housekeeping)
  if (!any(lengths(hk))) return(summary)
  out <- copy(summary)
  out[, role := ifelse(as.integer(cpu) %in% hk[[run[1]]], "housekeeping", "application"),
    by = run]
  out[]
}

# A row per run naming housekeeping CPUs and role: how many CPUs, the share
# of time the system took from them (median and worst), the p99.9 loss of
# the median CPU.
role_table <- function(summary, tails) {
  if (!"role" %in% names(summary)) return(data.table())
  s <- summary[run %in% summary[role == "housekeeping", unique(run)]]
  s[, p99_9_us := if (is.null(tails) || nrow(tails) == 0) NA_real_ else {
    tails[s, on = .(run, host, cpu), x.p99_9_us]
  }]
  # the median CPU, as every table and sentence says it (median_cpu)
  s[, .(cpus = .N, noise_median_percent = median_cpu(noise_percent),
    noise_max_percent = max(noise_percent),
    p99_9_us_median = median_cpu(p99_9_us)), by = .(run, role)][order(run, role)]
}

# The first screen's sentence of a run's roles, "" without housekeeping CPUs.
housekeeping_sentence <- function(roles, ref, hk) {
  r <- roles[run == ref]
  if (nrow(r) < 2) return("")
  h <- r[role == "housekeeping"]
  a <- r[role == "application"]
  ratio <- h$noise_median_percent / max(a$noise_median_percent, 1e-9)
  verdict <- if (ratio >= 2) {
    sprintf("the reserved CPUs take the noise (%sx the application CPUs')", format_number(ratio))
  } else {
    "the reserved CPUs do not draw the noise off the application CPUs"
  }
  cpus <- function(n, what) sprintf("%s %s CPU%s", format_number(n), what, if (n == 1) "" else "s")
  sprintf("The system took %s of the %s (%s) (median), %s of the %s, the worst %s: %s.",
    pct(h$noise_median_percent), cpus(h$cpus, "housekeeping"), cpu_list_text(hk),
    pct(a$noise_median_percent), cpus(a$cpus, "application"), pct(a$noise_max_percent), verdict)
}
