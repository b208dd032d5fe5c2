# Noise by cause (--trace): what held each measured CPU during the detours,
# as the kernel's trace saw it (docs/kernels.md, "Causes"). The kernels have
# joined detours to causes, detour by detour, in each participant's causes
# file; the tables here are added up from those files.

# The participants of a run whose detours were joined to their causes, each
# with its `causes` object.
run_units <- function(run) {
  rank_entries(run, which(rank_values(run, "causes.attributed", FALSE)))
}

# Each traced participant's causes file, read and checked: "start_ns span_ns
# lost_ns class name time_ns", a line per detour and cause.
read_causes <- function(run) {
  dir <- dirname(run$path)
  rbindlist(lapply(run_units(run), function(u) {
    c <- u$causes
    if (is.null(c) || !isTRUE(c$attributed)) return(NULL)
    path <- file.path(dir, c$file)
    if (!file.exists(path)) stop_input(path, "missing (the run's JSON lists it)")
    d <- if (file.size(path) == 0) {
      data.table(start_ns = numeric(), span_ns = numeric(), lost_ns = numeric(),
        class = character(), name = character(), time_ns = numeric())
    } else {
      tryCatch(fread(path, header = FALSE, sep = " ", colClasses = c("double", "double",
        "double", "character", "character", "double"),
        col.names = c("start_ns", "span_ns", "lost_ns", "class", "name", "time_ns"),
        showProgress = FALSE),
      error = function(e) stop_input(path, paste("not a causes file:", conditionMessage(e))),
      warning = function(w) stop_input(path, paste("not a causes file:", conditionMessage(w))))
    }
    bad <- which(!d$class %in% cause_classes | is.na(d$time_ns) | is.na(d$start_ns))
    if (length(bad)) stop_input(path, sprintf("'%s' is not a cause", d$class[bad[1]]), bad[1])
    d[, `:=`(unit = u$rank, cpu = u$cpu,
      host = u$host %||% run$meta$machine$hostname %||% NA_character_)]
  }))
}

# Per run, participant and class: the detours it took part in, its time, its
# longest time in one detour, and its share of all the time attributed.
cause_shares <- function(runs) {
  rbindlist(lapply(names(runs), function(name) {
    d <- read_causes(runs[[name]])
    if (nrow(d) == 0) return(NULL)
    per_detour <- d[, .(time_ns = sum(time_ns)), by = .(unit, cpu, host, start_ns, class)]
    s <- per_detour[, .(detours = .N, total_us = sum(time_ns) / 1e3,
      longest_us = max(time_ns) / 1e3), by = .(unit, cpu, host, class)]
    # every class, also those that took nothing
    s <- s[CJ(unit = unique(d$unit), class = cause_classes), on = .(unit, class)]
    s[, `:=`(cpu = cpu[!is.na(cpu)][1], host = host[!is.na(host)][1]), by = unit]
    setnafill(s, fill = 0, cols = c("detours", "total_us", "longest_us"))
    s[, share_percent := 100 * total_us / sum(total_us), by = unit]
    s[, `:=`(run = name, kernel = runs[[name]]$kernel)]
    setcolorder(s, c("run", "kernel", "unit", "cpu", "host", "class"))[]
  }))
}

# The eight names that took most, per run and participant, most first.
top_causes <- function(runs, n = 8) {
  rbindlist(lapply(names(runs), function(run_name) {
    d <- read_causes(runs[[run_name]])
    if (nrow(d) == 0) return(NULL)
    all <- d[, .(all = sum(time_ns)), by = unit]
    t <- d[, .(detours = uniqueN(start_ns), total_us = sum(time_ns) / 1e3),
      by = .(unit, cpu, host, class, name)][all, on = "unit"]
    t[, share_percent := 100 * total_us * 1e3 / all][, all := NULL]
    t <- t[order(unit, -total_us)][, utils::head(.SD, n), by = unit]
    t[, run := run_name]
    setcolorder(t, c("run", "unit", "cpu", "host", "class", "name"))[]
  }))
}

# Runs asked to trace that could not, and why (one line each for the report).
untraced_runs <- function(runs) {
  rbindlist(lapply(names(runs), function(name) {
    tr <- runs[[name]]$meta$trace
    if (is.null(tr) || isTRUE(tr$attributed)) return(NULL)
    data.table(run = name, why = tr$why %||% "not recorded")
  }))
}

# Runs whose trace lost events (its buffer overwrote the oldest of a busy
# CPU's): how many, and the losses' time they leave unseen over every CPU,
# in us and as a share of the losses' time. causes: cause_shares(runs).
trace_gaps <- function(runs, causes) {
  rbindlist(lapply(names(runs), function(name) {
    lost <- runs[[name]]$meta$trace$lost_events %||% 0
    if (lost == 0 || is.null(causes) || !nrow(causes)) return(NULL)
    mine <- causes[run == name]
    unseen <- sum(mine[class == "unseen", total_us])
    data.table(run = name, lost_events = lost, unseen_us = unseen,
      unseen_percent = 100 * unseen / sum(mine$total_us))
  }))
}

# A colour a class, in the catalogue's order: Set2's eight, and grey for
# the time the trace did not see.
cause_colours <- function() {
  stats::setNames(c(scales::brewer_pal(palette = "Set2")(8), "grey60")[seq_along(cause_classes)],
    cause_classes)
}

# Stacked share of the attributed time by class, a bar per CPU, a panel per
# run: the hardware share (nothing the kernel saw) is what is left unexplained.
plot_causes <- function(shares, title) {
  d <- copy(shares)[, `:=`(
    class = factor(class, levels = cause_classes),
    label = sprintf("%s cpu %s", host, cpu)
  )]
  ggplot2::ggplot(d, ggplot2::aes(x = label, y = share_percent, fill = class)) +
    ggplot2::geom_col(width = 0.7) +
    ggplot2::coord_flip() +
    ggplot2::facet_wrap(~run, ncol = 1, scales = "free_y") +
    ggplot2::scale_fill_manual(values = cause_colours(), drop = FALSE) +
    ggplot2::labs(title = title, x = NULL, y = "share of the losses' time (%)",
      caption = paste("hardware: time lost that nothing in the kernel's trace explains",
        "(hypervisor, SMI, a slower clock); unseen: time whose trace events were lost")) +
    theme_noise()
}
