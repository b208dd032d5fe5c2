# Runs named by what they are, for people: kernel, work kind, sampling
# frequency or granularity, how many CPUs on which hosts, and the noise
# injected on purpose ("FTQ multiiter 10 kHz, 2 CPUs on node1"). The tables'
# `run` column keeps the run's path under the results directory, which
# scripts use; runs.csv joins the two.

# a kernel's short name in labels (the catalogue's), or its own
kernel_label <- function(kernel) noisebench_kernels$kernels[[kernel]]$label %||% kernel

run_description <- function(name, run) {
  m <- run$meta
  hosts <- unique(thread_values(run, "host", ""))
  hz <- if (fixed_time(kernel_info(run$kernel))) {
    m$frequency_hz %||% (1e9 / m$quantum_ns)
  } else {
    NA_real_
  }
  each <- unique(rank_injects(run))
  inject <- unique(unlist(lapply(c(list(m$inject), lapply(seq_len(nrow(each)), function(k) {
    if (!is.na(each$duration_us[k])) as.list(each[k])
  })), function(i) if (!is.null(i$duration_us)) {
      sprintf("%s us every %s us%s", i$duration_us, i$period_us,
        if (identical(i$pattern, "poisson")) " on average (Poisson)" else "")
    })))
  data.table(run = name, kernel = run$kernel,
    work = m$work %||% NA_character_, sampling_hz = hz,
    granularity_us = m$granularity_us %||% NA_real_,
    cpus = rank_count(run), hosts = format_hosts(hosts),
    inject = if (length(inject)) paste(inject, collapse = ", ") else "")
}

# A few hosts by name; many by their count, the first and the last: a label
# stays one line at 10,000 nodes.
format_hosts <- function(hosts, named_max = 3) {
  if (length(hosts) <= named_max) return(paste(hosts, collapse = " "))
  sprintf("%s nodes (%s ... %s)", format_number(length(hosts)), hosts[[1]],
    hosts[[length(hosts)]])
}

format_hz <- function(hz) {
  ifelse(hz >= 1000, paste(signif(hz / 1000, 4), "kHz"), paste(signif(hz, 4), "Hz"))
}

# One row per run: its path and its label, unique over the report.
run_labels <- function(runs) {
  d <- rbindlist(lapply(names(runs), function(n) run_description(n, runs[[n]])), fill = TRUE)
  parts <- function(i) {
    r <- d[i]
    what <- paste(c(kernel_label(r$kernel), if (!is.na(r$work)) r$work,
      if (!is.na(r$sampling_hz)) format_hz(r$sampling_hz),
      if (!is.na(r$granularity_us)) paste(format_phase(r$granularity_us), "spin")),
      collapse = " ")
    label <- sprintf("%s, %s CPU%s on %s", what, format_number(r$cpus),
      if (r$cpus == 1) "" else "s", r$hosts)
    if (nzchar(r$inject)) label <- paste0(label, ", injected ", r$inject)
    label
  }
  d[, label := vapply(seq_len(.N), parts, "")]
  # the same run twice (two JUBE iterations): numbered in path order
  d[, label := if (.N > 1) paste0(label, " #", seq_len(.N)) else label, by = label]
  d[]
}

# A table for the page: runs shown by label.
with_labels <- function(dt, labels) {
  if (is.null(dt) || nrow(dt) == 0 || is.null(labels)) return(dt)
  out <- copy(dt)
  for (col in intersect(c("run", "partner_run"), names(out))) {
    m <- match(out[[col]], labels$run)
    set(out, j = col, value = ifelse(is.na(m), out[[col]], labels$label[m]))
  }
  out
}

# Hosts in a cell or a sentence: their names, or of many their count and
# the first two (a line naming 10,000 hosts is read by nobody).
hosts_text <- function(hosts, sep = " ") {
  if (length(hosts) <= 4) return(paste(hosts, collapse = sep))
  sprintf("%s hosts: %s ...", format_number(length(hosts)), paste(hosts[1:2], collapse = sep))
}
