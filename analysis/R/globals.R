# The columns data.table's expressions name (dt[, .(x = sum(y)), by = z])
# and its `.()`, `.N`, `.SD`: R CMD check cannot see that they are columns,
# not variables, and says so once for each; declared here, the check is
# clean and stays able to name a real undefined variable.
utils::globalVariables(c(
  ".", "a", "above_1000us_per_hour", "above_100us_per_hour", "action", "agreeing", "at", "b",
  "base", "bin", "block", "bound", "bucket", "calibration_time_s", "cause", "cell", "centre",
  "check", "ci_high", "ci_low", "column", "cores", "cpu", "cpus", "cpus_affected", "cpus_online",
  "data", "difference", "differs", "docs", "failing", "edge", "figure",
  "finding", "frequency_hz", "from_us", "granularity_us", "group", "hi", "host", "hosts", "hours",
  "i.centre", "i.member", "i.robust_z", "i.se", "i.slowdown", "i.spread", "i.typical_percent",
  "index", "inject", "injected", "item", "job_id", "kernel", "knob", "ks_p_value", "ks_statistic",
  "kurtosis", "label", "length_ns", "lo", "location", "longest_us", "lost", "max_us",
  "mean_run_time_s", "meets", "member", "members", "model_holds", "ms", "n", "name", "noise_percent", "ns",
  "numa_node", "off", "origin", "os_noise_percent", "outlier", "p99_9_us", "p99_us", "part",
  "partition", "partner_hz", "partner_run", "partners", "pass", "percent", "phase_us", "point",
  "position", "power", "preference", "processes", "ranks", "ratio", "robust_z", "role", "row",
  "rule", "rules", "run", "run_a", "run_b", "run_label", "sampling_hz", "scaled_noise_mean",
  "scaled_noise_sd", "scope", "sd",
  "sd_run_time_s", "setNames", "setting", "share", "share_of_detours_percent", "share_percent",
  "share_percent_max", "side", "slice", "slowdown_percent", "stolen_percent", "stolen_ci95_low", "stolen_ci95_high", "slowdown", "smt_thread", "spread",
  "start_ns", "summed", "system_correlation", "system_name", "tail", "tasks", "thread", "threads",
  "time_ns", "time_s", "to_us", "total", "total_us", "typical_percent", "unit", "unmet_rules",
  "us", "v",
  "value", "verdict", "virtual_machine", "w", "weight", "what", "why", "work", "x", "x.p99_9_us", "ymax",
  "ymin"
))
