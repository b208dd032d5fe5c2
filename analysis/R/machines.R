# The machines a survey ran on and their tuning, as the report's machines
# table and first screen describe them (the kernels' "machine" and "tuning"
# objects).

machine_description <- function(data) {
  first <- data$runs[[1]]$meta
  m <- first$machine %||% data$machine$machine
  cal <- data$machine %||% first$calibration
  c(
    host = m$hostname, cpu = m$cpu_model, architecture = m$arch,
    `CPUs online` = m$cpus_online, cores = m$cores, `SMT threads per core` = m$smt,
    `NUMA nodes` = m$numa_nodes, kernel = m$kernel_release, `kernel command line` = m$kernel_cmdline,
    isolcpus = if (nzchar(m$isolcpus %||% "")) m$isolcpus else "none",
    nohz_full = if (nzchar(m$nohz_full %||% "")) m$nohz_full else "none",
    clocksource = m$clocksource,
    `virtual machine` = if (isTRUE(m$virtual_machine)) "yes" else "no",
    timer = first$timer, `ticks per ns` = signif(first$ticks_per_ns, 6),
    `timer read (ns)` = signif(cal$timer_read_ns %||% NA, 3),
    tuning_description(first$tuning)
  )
}

# One row per host the runs measured on: each run describes every host its
# ranks ran on ("machines"; before that, only its own "machine").
machines_table <- function(runs) {
  all <- unlist(lapply(runs, function(r) r$meta$machines %||% list(r$meta$machine)),
    recursive = FALSE)
  # a column a field, each made at once (10^4 machines' rows)
  field <- function(name, default) {
    vapply(all, function(m) as.vector(m[[name]] %||% default, typeof(default))[1], default)
  }
  rows <- data.table(
    host = field("hostname", NA_character_), cpu = field("cpu_model", NA_character_),
    architecture = field("arch", NA_character_), cpus_online = field("cpus_online", NA_integer_),
    cores = field("cores", NA_integer_), smt = field("smt", NA_integer_),
    numa_nodes = field("numa_nodes", NA_integer_), kernel = field("kernel_release", NA_character_),
    isolcpus = field("isolcpus", ""), nohz_full = field("nohz_full", ""),
    clocksource = field("clocksource", NA_character_),
    virtual_machine = field("virtual_machine", NA)
  )
  unique(rows, by = "host")
}

# Each host's HPE Cray xname where its machine recorded one (the kernels
# read /etc/cray/xname): a table of host and xname, NULL where none did.
machine_xnames <- function(runs) {
  all <- unlist(lapply(runs, function(r) r$meta$machines %||% list(r$meta$machine)),
    recursive = FALSE)
  named <- Filter(function(m) is.character(m$xname) && is.character(m$hostname), all)
  if (!length(named)) return(NULL)
  unique(data.table(host = vapply(named, function(m) m$hostname, ""),
    xname = vapply(named, function(m) m$xname, "")), by = "host")
}

# The machines table on the page: one row per kind of machine (every
# column alike but the host), with how many hosts and the first of them. A
# Tier-0 system of 10,000 identical nodes is one row; machines.csv has each.
machine_kinds <- function(machines) {
  kind <- setdiff(names(machines), "host")
  machines[, .(hosts = .N, host = if (.N == 1) host else paste(host[1], "...")), by = kind][,
    c("host", "hosts", kind), with = FALSE]
}

# What a tuner checks first (the kernels' "tuning" object), where recorded.
tuning_description <- function(t) {
  if (is.null(t)) return(NULL)
  or_none <- function(x) if (nzchar(x %||% "")) x else "none"
  c(
    HZ = or_none(t$hz), NO_HZ_FULL = or_none(t$no_hz_full), preemption = or_none(t$preempt),
    `kernel configuration from` = or_none(t$kernel_config), rcu_nocbs = or_none(t$rcu_nocbs),
    `transparent huge pages` = or_none(t$transparent_hugepages),
    `irqbalance running` = if (isTRUE(t$irqbalance_running)) "yes" else "no",
    `noisebench commit` = t$noisebench_commit, compiler = t$compiler,
    `MPI library` = or_none(t$mpi_library)
  )
}

# Every warning the kernels gave about the measured CPUs' tuning, once, with
# the runs that gave it.
tuning_findings <- function(runs) {
  w <- rbindlist(lapply(names(runs), function(n) {
    found <- unlist(runs[[n]]$meta$tuning$warnings)
    if (length(found)) data.table(finding = found, run = n)
  }))
  if (nrow(w) == 0) return(data.table(finding = character(), runs = character()))
  w[, .(runs = paste(run, collapse = " ")), by = finding]
}
