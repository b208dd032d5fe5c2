# From why to how: each cause the trace named (causes.R), with what moves it
# off the measured CPUs, this machine's setting of that knob now and the
# kernel documentation it comes from. The rules are the catalogue's
# (cause_advice in kernels.json): the first whose class matches and whose
# names match the cause's name.

advice_rules <- function() noisebench_kernels$cause_advice

# The rule of each (class, name), by position in advice_rules().
advice_rule_of <- function(class, name) {
  rules <- advice_rules()
  vapply(seq_along(class), function(i) {
    for (k in seq_along(rules)) {
      r <- rules[[k]]
      if (r$class == class[i] && grepl(r$names, name[i])) return(k)
    }
    NA_integer_
  }, 1L)
}

# The CPUs the system's work can be moved to, as a list ("0", "0,2-3"), for
# the runs of a list together (the advice speaks of every run it covers):
# those the runs name housekeeping (--housekeeping), else those none of them
# measured; "" when they measured every online CPU and name none.
housekeeping_cpus <- function(runs) {
  if (!is.null(runs$meta)) runs <- list(runs)
  named <- unlist(lapply(runs, run_housekeeping))
  if (length(named)) return(cpu_list_text(named))
  measured <- unique(unlist(lapply(runs, function(r) rank_values(r, "cpu", -1L))))
  online <- max(vapply(runs, function(r) as.integer(r$meta$machine$cpus_online %||% 0L), 0L))
  free <- setdiff(seq_len(online) - 1L, measured)
  if (length(free) == 0) return("")
  cpu_list_text(free)
}

# 0 1 2 5 -> "0-2,5"
cpu_list_text <- function(cpus) {
  cpus <- sort(unique(cpus))
  starts <- c(TRUE, diff(cpus) != 1)
  runs <- split(cpus, cumsum(starts))
  paste(vapply(runs, function(r) {
    if (length(r) == 1) as.character(r) else paste0(r[1], "-", r[length(r)])
  }, ""), collapse = ",")
}

# What this machine has now of each setting a rule names, as words, from a
# run's description (its machine and tuning objects).
current_settings <- function(run, covered = list(run)) {
  m <- run$meta$machine %||% list()
  t <- run$meta$tuning %||% list()
  knobs <- t$knobs %||% list()
  cmdline <- m$kernel_cmdline %||% ""
  on_cmdline <- function(name) {
    hit <- regmatches(cmdline, regexpr(paste0("(^| )", name, "(=[^ ]*)?( |$)"), cmdline))
    if (length(hit) == 0) return("not set")
    value <- sub("^[^=]*=?", "", trimws(hit))
    if (nzchar(value)) value else "set"
  }
  set_or <- function(x, none = "not set") if (nzchar(x %||% "")) x else none
  knob <- function(name) set_or(knobs[[name]], "not read")
  irqs <- length(t$irqs_on_measured_cpus %||% list())
  hk <- housekeeping_cpus(covered)
  governors <- unique(unlist(m$cpufreq_governor %||% list()))
  c(
    nohz_full = set_or(m$nohz_full), no_hz_full = paste0("CONFIG_NO_HZ_FULL=", set_or(t$no_hz_full, "?")),
    hz = paste0("HZ=", set_or(t$hz, "?")), isolcpus = set_or(m$isolcpus),
    rcu_nocbs = set_or(t$rcu_nocbs), irqaffinity = on_cmdline("irqaffinity"),
    irqs_on_measured_cpus = sprintf("%d interrupt%s may be delivered to the measured CPUs", irqs,
      if (irqs == 1) "" else "s"),
    irqbalance = if (isTRUE(t$irqbalance_running)) "irqbalance running" else "irqbalance not running",
    housekeeping = if (length(unlist(lapply(covered, run_housekeeping)))) {
      paste("housekeeping CPUs:", hk)
    } else if (nzchar(hk)) paste("CPUs not measured:", hk) else "every CPU was measured",
    smt = sprintf("%s SMT thread%s a core", m$smt %||% "?", if (identical(m$smt, 1L)) "" else "s"),
    virtual_machine = if (isTRUE(m$virtual_machine)) "a virtual machine" else "bare metal",
    smis = if (is.null(t$smis)) "SMIs not counted" else paste(t$smis, "SMIs during the run"),
    governor = if (length(governors)) {
      paste("cpufreq governor", paste(governors, collapse = ", "))
    } else "no cpufreq governor",
    turbo = if (is.null(m$turbo)) "turbo not said by the kernel" else paste("turbo", m$turbo),
    setNames(vapply(names(knobs), knob, ""), names(knobs))
  )
}

# A setting as a line of a tuning guide: "vm.stat_interval = 1",
# "nohz_full=not set"; the sentences as they are.
setting_words <- function(keys, values) {
  values[is.na(values)] <- "not recorded"
  ifelse(grepl(".", keys, fixed = TRUE), paste(keys, "=", values),
    ifelse(keys %in% c("nohz_full", "isolcpus", "rcu_nocbs", "irqaffinity"),
      paste0(keys, "=", values), values))
}

# The action a rule gives for one cause name at run time, "" where it has
# none or the name holds no PID or interrupt number.
advice_action <- function(rule, name, housekeeping) {
  template <- rule$action %||% ""
  if (!nzchar(template) || !nzchar(housekeeping)) return("")
  pid <- regmatches(name, regexpr("(?<=:)[0-9]+$", name, perl = TRUE))
  irq <- regmatches(name, regexpr("^[0-9]+(?=:)", name, perl = TRUE))
  if (grepl("{pid}", template, fixed = TRUE) && length(pid) == 0) return("")
  if (grepl("{irq}", template, fixed = TRUE) && length(irq) == 0) return("")
  out <- gsub("{housekeeping}", housekeeping, template, fixed = TRUE)
  out <- gsub("{pid}", if (length(pid)) pid else "", out, fixed = TRUE)
  gsub("{irq}", if (length(irq)) irq else "", out, fixed = TRUE)
}

# One row per rule the traced runs met: the causes it covers (the names
# that took most), their share of all the losses' time attributed, on how
# many CPUs, what to do, this machine's setting, the documentation and, for
# what can be moved at run time, the commands. top: top_causes(runs).
advice_table <- function(runs, top) {
  if (is.null(top) || nrow(top) == 0) return(data.table())
  # the settings and the CPUs to move work to of every run the table
  # covers: a CPU one run left free another may have measured
  covered <- runs[unique(top$run)]
  settings <- current_settings(covered[[1]], covered)
  rules <- advice_rules()
  d <- copy(top)[, rule := advice_rule_of(class, name)][!is.na(rule)]
  all_us <- sum(d$total_us)
  hk <- housekeeping_cpus(covered)
  d[, action := vapply(seq_len(.N), function(i) advice_action(rules[[rule[i]]], name[i], hk), "")]
  out <- d[, .(
    class = class[1],
    name = paste(utils::head(.SD[, .(t = sum(total_us)), by = name][order(-t)]$name, 3),
      collapse = ", "),
    share_of_detours_percent = 100 * sum(total_us) / all_us,
    cpus_affected = uniqueN(paste(host, cpu)),
    action = paste(unique(action[nzchar(action)]), collapse = "; ")
  ), by = rule][order(-share_of_detours_percent)]
  out[, `:=`(
    knob = vapply(rule, function(k) rules[[k]]$knob, ""),
    setting = vapply(rule, function(k) {
      keys <- unlist(rules[[k]]$settings)
      paste(setting_words(keys, settings[keys]), collapse = "; ")
    }, ""),
    docs = vapply(rule, function(k) rules[[k]]$docs, "")
  )]
  out[, rule := NULL][]
}
