# Hosts kept apart: the requirements' verdict per host, and the nodes table that
# names the nodes noisier than the others (an acceptance team runs the
# survey on every node of a new system to find the few bad ones).

# The requirements' verdict of each host, kernel and work kind, over the
# judged ranks of the runs without injection (an injected run measures the
# injector).
host_verdicts <- function(summary) {
  v <- requirements_verdicts(summary[inject == "none"], c("host", "kernel", "work"))
  if (nrow(v) == 0) {
    return(data.table(host = character(), kernel = character(), work = character(),
      threads = integer(), failing = integer(), meets = logical(), verdict = character()))
  }
  v[, .(host, kernel, work, threads, failing, meets, verdict)]
}

# The report's one line: every host met the requirements, or which did not.
verdict_text <- function(verdicts) {
  if (nrow(verdicts) == 0) return("no run without injection that a rule speaks of")
  bad <- verdicts[meets == FALSE]
  if (nrow(bad) == 0) {
    return(sprintf("met on every host (%s)", hosts_text(unique(verdicts$host), ", ")))
  }
  sprintf("not met on %s of %s hosts: %s", format_number(uniqueN(bad$host)),
    format_number(uniqueN(verdicts$host)), hosts_text(unique(bad$host), ", "))
}

# One row per run and host: the host's noise (noise_percent, the mean over
# its ranks from the summary) and its typical stretch (typical_percent: the
# share of the time lost in the median of its ranks' 100 equal stretches,
# noise_over_time, against the run's best sample on any host, so that a node
# slow in every sample shows as slow), against the stretches of every other
# host of the run: their median and MAD (scaled to a standard deviation),
# and the robust z-score of the typical stretch (outliers.R). The other
# hosts' spread over their CPUs and over time is the yardstick, so two
# nodes suffice. A host is an outlier when it is noisier by more than
# outlier_z; quieter hosts are not flagged. Where node_locations places
# the hosts (`places`), a column a level says where each sits.
node_table <- function(runs, summary, yardsticks = lapply(runs, stretch_yardsticks),
                       places = NULL) {
  rbindlist(lapply(names(runs), function(name) {
    s <- summary[run == name]
    hosts <- s[, .(ranks = .N, inject = paste(unique(inject), collapse = " "),
      noise_percent = mean(noise_percent)), by = host]
    standing <- node_standing(yardsticks[[name]])[hosts, on = "host"]
    out <- standing[, .(run = name, kernel = runs[[name]]$kernel, host, ranks, inject,
      noise_percent, typical_percent, others_median_percent = centre,
      others_mad_percent = spread, robust_z, outlier)]
    if (length(location_levels(places))) out <- places[out, on = "host"]
    out
  }), fill = TRUE)
}

