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
# the host:cpu of the largest. Runs without lines (FWQ, other kernels, a
# run from before the kernels found them) have no rows.
machine_lines <- function(runs, cell_bins = 3) {
  rbindlist(lapply(names(runs), function(name) {
    run <- runs[[name]]
    if (run$kernel != "ftq") return(NULL)
    ranks <- run$meta$ranks
    spectra <- lapply(ranks, function(u) u$spectrum)
    if (all(vapply(spectra, is.null, TRUE))) return(NULL)
    counts <- vapply(spectra, function(s) length(s$frequency_hz), 0L)
    host <- run$meta$machine$hostname %||% NA_character_
    lines <- data.table(
      host = rep(vapply(ranks, function(u) u$host %||% host, ""), counts),
      cpu = rep(vapply(ranks, function(u) as.integer(u$cpu), 0L), counts),
      unit = rep(seq_along(ranks), counts),
      frequency_hz = as.numeric(unlist(lapply(spectra, function(s) s$frequency_hz))),
      share_percent = as.numeric(unlist(lapply(spectra, function(s) s$share_percent)))
    )
    if (nrow(lines) == 0) return(NULL)
    cell <- cell_bins * max(vapply(spectra, function(s) s$resolution_hz %||% 0, 0))
    lines[, cell := round(frequency_hz / cell)]
    out <- lines[, .(
      frequency_hz = stats::median(frequency_hz),
      cpus = uniqueN(unit),
      hosts = uniqueN(host),
      share_percent_median = stats::median(share_percent),
      share_percent_max = max(share_percent),
      worst = paste0(host[which.max(share_percent)], ":", cpu[which.max(share_percent)])
    ), by = cell]
    out[, `:=`(cell = NULL, run = name, cpus_percent = 100 * cpus / length(ranks))]
    setcolorder(out, c("run", "frequency_hz", "cpus", "cpus_percent", "hosts"))
    out[order(-cpus, -share_percent_max)]
  }))
}
