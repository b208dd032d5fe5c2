# The first screen: a paragraph a system in plain words (how much of each
# CPU the system takes, how often and how long, the longest, which nodes
# and cores are worse and why, the Sequoia verdict, the predicted slowdown
# at the machine's size) beside one plot that shows it. A system is a
# kind of machine: hosts alike in every column of the machines table.

# A row per host: its system's number and name ("64 hosts: nb00001,
# nb00002 ... (AMD EPYC, 128 CPUs, Linux 6.1)").
host_systems <- function(machines) {
  kind <- setdiff(names(machines), "host")
  m <- copy(machines)[, system := .GRP, by = kind]
  m[, system_name := sprintf("%s (%s, %s CPUs, Linux %s%s)", hosts_text(host, ", "),
    cpu[1], format_number(cpus_online[1]), kernel[1],
    if (isTRUE(virtual_machine[1])) ", a virtual machine" else ""), by = system]
  m[, .(host, system, system_name)]
}

# The run a system's paragraph speaks of: without injection, the most CPUs,
# then the kernel first in the catalogue's quote order for noise (FWQ, whose
# loss is the share of the CPU the system took).
reference_run <- function(summary, hosts) {
  s <- summary[inject == "none" & host %in% hosts]
  if (nrow(s) == 0) s <- summary[host %in% hosts]
  if (nrow(s) == 0) return(NA_character_)
  # a probe too coarse for the threshold is quoted last (speed.h)
  coarse <- if ("coarse" %in% names(s)) s$coarse %in% TRUE else logical(nrow(s))
  runs <- s[, .(cpus = .N, preference = quote_order(kernel[1], "noise")),
    by = run][s[, .(run, coarse)][, .(coarse = mean(coarse)), by = run], on = "run"]
  runs[order(-cpus, coarse, preference)]$run[1]
}

# The processes the first screen predicts the slowdown at: the machine's
# (--machine-cpus), else every CPU the survey measured.
machine_processes <- function(summary, machine_cpus = NULL) {
  as.numeric(machine_cpus %||% max(summary[, .N, by = run]$N))
}

# "12.3 µs", "4.56 ms", "1.2 s": a loss in the unit a reader takes in
duration_words <- function(us) sub("us$", "\u00b5s", duration_label(signif(us, 3)))

# quoted: the run whose predicted slowdown it quotes (quoted_scale_runs).
system_paragraph <- function(sys, tables, labels, processes, runs, quoted = NA) {
  on <- sys$host
  ref <- reference_run(tables$summary, on)
  if (is.na(ref)) return(NULL)
  s <- tables$summary[run == ref & host %in% on]
  # with reserved CPUs, what the application is left with
  hk <- run_housekeeping(runs[[ref]])
  whose <- ""
  if ("role" %in% names(s) && length(hk) && any(s$role == "application")) {
    s <- s[role == "application"]
    whose <- "application "
  }
  tl <- tables$tails[run == ref & host %in% on & paste(host, cpu) %in% s[, paste(host, cpu)]]
  label <- labels$label[match(ref, labels$run)]
  words <- c(
    share_sentence(s, whose, tables$summary[host %in% on & inject == "none"]),
    if (length(hk)) housekeeping_sentence(tables$roles, ref, hk),
    if (nrow(tl)) {
      longest <- tl[which.max(max_us)]
      sprintf(paste("Per CPU-hour, %s losses last longer than 10 \u00b5s and %s longer than 1 ms;",
        "99.9%% of samples lose less than %s; the longest loss was %s (%s:%s)."),
        format_number(median_cpu(tl$above_10us_per_hour)),
        format_number(median_cpu(tl$above_1000us_per_hour)),
        duration_words(median_cpu(tl$p99_9_us)), duration_words(longest$max_us),
        longest$host, longest$cpu)
    },
    worse_sentence(tables$outliers[run == ref & (host %in% on | is.na(host))]),
    cause_sentence(tables$causes, ref, on),
    requirements_sentence(tables$verdicts[host %in% on], requirements_words(tables$requirements)),
    slowdown_sentence(tables$scale, quoted, processes, labels)
  )
  list(run = ref, label = label, text = paste(words, collapse = " "))
}

pct <- function(x) paste0(format_number(x), "%")

# What the system takes of the median CPU (median_cpu_at, as the key
# figures' table), with its 95% interval, and of the worst; then, apart,
# what depends on the work: each work kind's slowdown below its best speed
# on its median CPU, over every run of these hosts (`work`). Where the
# kernel does not split its time (older runs), the loss alone.
share_sentence <- function(s, whose, work = s) {
  m <- median_cpu_at(as.numeric(s$stolen_percent))
  cpus <- sprintf("the median of the %s %sCPU%s measured", format_number(nrow(s)), whose,
    if (nrow(s) == 1) "" else "s")
  if (is.na(m)) {
    worst <- s[which.max(noise_percent)]
    return(sprintf(paste("Each %sCPU loses %s of its time (%s; the kernel does not tell the",
      "system's share from the work's own variation); the worst, %s:%s, lost %s."), whose,
      pct(median_cpu(s$noise_percent)), cpus, worst$host, worst$cpu, pct(worst$noise_percent)))
  }
  mid <- s[m]
  worst <- s[which.max(stolen_percent)]
  ci <- if (is.na(mid$stolen_ci95_low)) "" else
    sprintf(", 95%% interval %s to %s", pct(mid$stolen_ci95_low), pct(mid$stolen_ci95_high))
  paste(sprintf("The system takes %s of each %sCPU (%s%s), %s of the worst, %s:%s.",
    pct(mid$stolen_percent), whose, cpus, ci, pct(worst$stolen_percent), worst$host,
    worst$cpu), coarse_sentence(s), work_speed_sentence(work))
}

# The probes too coarse for the threshold, said rather than under-counted
# in silence: how many CPUs, and the coarsest resolution.
coarse_sentence <- function(s) {
  if (!"coarse" %in% names(s)) return("")
  coarse <- s[coarse %in% TRUE]
  if (nrow(coarse) == 0) return("")
  sprintf(paste("On %s of the %s CPUs the probe cannot see every loss of %s (its resolution",
    "is up to %s): what it gives there may be low."), format_number(nrow(coarse)),
    format_number(nrow(s)), duration_words(max(coarse$threshold_us)),
    duration_words(max(coarse$resolution_us)))
}

# The work's own sensitivity, apart from the headline: each work kind's
# slowdown below its best speed on its median CPU, the largest first.
work_speed_sentence <- function(s) {
  if (!"slowdown_percent" %in% names(s) || all(is.na(s$slowdown_percent))) return("")
  # a kernel that sweeps its work is named by its work kind, another by itself
  named <- function(kernel, work) {
    ifelse(vapply(kernel, function(k) "work" %in% names(kernel_info(k)$sweep), TRUE) &
      !is.na(work), toupper(work), vapply(kernel, kernel_label, ""))
  }
  kinds <- s[!is.na(slowdown_percent), .(slowdown = median_cpu(slowdown_percent)),
    by = .(work = named(kernel, work))][order(-slowdown)]
  sprintf("On this machine the work also runs below its best speed, the work's, not the system's: %s.",
    paste(sprintf("%s %s", kinds$work, pct(kinds$slowdown)), collapse = ", "))
}

worse_sentence <- function(outliers) {
  if (is.null(outliers) || nrow(outliers) == 0) {
    return("No node or core stands out from the others.")
  }
  # the largest units first (outlier_table's order), each level's most apart first
  o <- outliers
  shown <- utils::head(o, 3)
  above_node <- !shown$scope %in% c("node", "core")
  # a node or core said with the unit it sits in, where the machine's levels are known
  within <- ifelse(above_node | is.na(shown$location), "", paste(" in", shown$location))
  unit <- ifelse(shown$scope == "core", paste0("core ", shown$host, ":", shown$cpu, within),
    ifelse(shown$scope == "node", paste0("node ", shown$host, within),
      paste(shown$scope, shown$location)))
  size <- ifelse(above_node, paste0(format_number(shown$ranks), " CPUs, "), "")
  what <- sprintf("%s (%s%s taken by the system)", unit, size, pct(shown$noise_percent))
  sprintf("Worse than the others: %s%s.", paste(what, collapse = "; "),
    if (nrow(o) > 3) sprintf("; and %s more in outliers.csv", format_number(nrow(o) - 3)) else "")
}

cause_sentence <- function(causes, ref, on) {
  if (is.null(causes) || nrow(causes) == 0) {
    return("The runs were not traced (--trace), so the causes are not named.")
  }
  c <- causes[run == ref & host %in% on, .(us = sum(total_us)), by = class][us > 0]
  if (nrow(c) == 0) return("")
  c <- c[order(-us)][, share := 100 * us / sum(us)]
  top <- utils::head(c, 3)
  sprintf("Of the losses' time, the trace puts %s (What removes it, below).",
    paste(sprintf("%s on %s", pct(top$share), top$class), collapse = ", "))
}

# The verdict of the requirements the kernels judged each rank by (a site's
# file, or the Sequoia criteria), as the kernels gave it.
requirements_sentence <- function(verdicts, requirements) {
  if (is.null(verdicts) || nrow(verdicts) == 0) {
    return(sprintf("No rule of %s speaks of a run without injection here.", requirements))
  }
  bad <- verdicts[meets == FALSE]
  if (nrow(bad) == 0) {
    return(sprintf("The runs meet %s on all %s threads judged.", requirements,
      format_number(sum(verdicts$threads))))
  }
  sprintf("The runs do not meet %s: %s of the %s threads judged fail them (Evidence, below).",
    requirements, format_number(sum(bad$failing)), format_number(sum(verdicts$threads)))
}

slowdown_sentence <- function(scale, quoted, at_processes, labels) {
  if (is.null(scale) || nrow(scale) == 0 || is.na(quoted)) return("")
  r <- scale[run == quoted & phase_us == 1000 & mode == "uncoordinated"]
  if (nrow(r) == 0) return("")
  m <- r[which.min(abs(log(at_processes) - log(r$processes)))]
  big <- r[processes == 10000]
  sprintf(paste("A bulk-synchronous application of %s processes synchronising every 1 ms",
    "would run %s slower%s (from %s)."),
    format_number(m$processes), paste0(format_number(m$slowdown), "x"),
    if (nrow(big) && m$processes != 10000) {
      sprintf(", %sx at 10,000 processes", format_number(big$slowdown))
    } else "",
    labels$label[match(quoted, labels$run)])
}

# The first screen's plot of a system: of a few CPUs, each CPU's loss by
# its length (the kernel's buckets); of many (or a run without the
# buckets), the machine map (nodes placed by node_locations), the core map
# (several nodes) or the ranking (one).
system_plot <- function(dir, run, name, label, summary, index, places = NULL) {
  n <- length(run$threads)
  file <- paste0("system-", index)
  d <- if (n <= detail_units_max) cpu_loss_by_length(run) else data.table()
  if (nrow(d)) {
    caption <- paste0(label, ": the share of each CPU's time (%) lost in losses of each ",
      "length. Short losses at the left are interrupts and ticks; long ones at the right ",
      "are daemons and stalls.")
    return(setNames(save_plot(plot_cpu_loss_by_length(d), dir, file, width = 6.5,
      height = 4), caption))
  }
  s <- summary[run == name]
  map <- if (uniqueN(s$host) > 1) machine_map_plot(dir, file, s, places, label)
  if (!is.null(map)) return(map)
  if (uniqueN(s$host) > 1) {
    caption <- paste0(label, ": the share of its time (%, colour) the system took from each ",
      "core, a row per ",
      "node, a column per CPU; a dark row is a bad node, a dark column a bad CPU on every node.")
    return(setNames(save_plot(plot_core_map(s, label), dir, file, width = 6.5,
      height = 4.5), caption))
  }
  caption <- paste0(label, ": the share of its time (%) the system took from each of the ", n,
    " CPUs (red), the noisiest first, and what each lost in all (black); a step at the left ",
    "is a few bad CPUs.")
  setNames(save_plot(plot_unit_ranking(s, label), dir, file, width = 6.5, height = 4),
    caption)
}

# A row per CPU and bucket: the share of the CPU's time lost in losses of
# that length (each rank's histogram, src/lib/base/tails.h's buckets).
cpu_loss_by_length <- function(run) {
  edges_us <- c(0, as.numeric(unlist(run$meta$loss_histogram$edges_ns)) / 1e3, Inf)
  lost <- rank_matrix(run, "tails.histogram.lost_ns")
  seconds <- rank_values(run, "tails.loss.seconds")
  k <- seq_len(ncol(lost))
  cpu <- paste0(thread_values(run, "host", ""), ":", thread_values(run, "cpu", 0L))
  # a row a rank and bucket, the rank's buckets up to its last
  d <- data.table(cpu = rep(cpu, each = length(k)), from_us = edges_us[k],
    to_us = edges_us[k + 1], lost_percent = as.vector(100 * t(lost / (seconds * 1e9))))
  d[!is.na(lost_percent) & from_us > 0]
}

plot_cpu_loss_by_length <- function(d) {
  d <- copy(d)[, bucket := factor(length_label(from_us, to_us),
    levels = unique(length_label(from_us, to_us)[order(from_us)]))]
  ggplot2::ggplot(d, ggplot2::aes(bucket, lost_percent, fill = cpu)) +
    ggplot2::geom_col(position = ggplot2::position_dodge(preserve = "single")) +
    ggplot2::labs(x = "how long each loss was", y = "share of the CPU's time (%)",
      fill = "CPU") +
    theme_noise() +
    ggplot2::theme(axis.text.x = ggplot2::element_text(angle = 35, hjust = 1),
      legend.position = "top")
}

# The first screen's HTML: a system's words beside its figure, for each.
first_screen_html <- function(paragraphs, pictures) {
  unlist(lapply(seq_along(paragraphs), function(i) {
    p <- paragraphs[[i]]
    f <- pictures[[i]]
    c('<div class="system">',
      sprintf('<div class="words"><p><b>%s</b></p><p>%s</p><p class="csv">From %s.</p></div>',
        html_escape(p$system), html_escape(p$text), html_escape(p$label)),
      if (length(f)) html_plot(f, names(f)),
      "</div>")
  }))
}
