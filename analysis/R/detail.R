# Which CPUs or ranks a plot shows one by one. A node of 288 CPUs, or a
# job of 10^5 ranks, cannot have a panel each (nor a reader for them): the
# figures with a panel per unit show the noisiest few and the quietest, for
# contrast, and every unit is in the pictures that summarise (the ranking,
# the heat map, the tables).
detail_units_max <- 8

# Positions of the units shown in detail, in their own order: all when there
# are at most k, else the k - 1 with the most noise and the one with the
# least (units without a figure come last).
detail_positions <- function(noise_percent, k = detail_units_max) {
  n <- length(noise_percent)
  if (n <= k) return(seq_len(n))
  worst <- order(-noise_percent, na.last = TRUE)[seq_len(k - 1)]
  rest <- setdiff(which(!is.na(noise_percent)), worst)
  best <- if (length(rest)) rest[which.min(noise_percent[rest])] else setdiff(seq_len(n), worst)[1]
  sort(c(worst, best))
}

# The run with only its units shown in detail.
detail_run <- function(run, noise_percent, k = detail_units_max) {
  subset_run(run, detail_positions(noise_percent, k))
}

# The run with only its units at positions keep (its threads and their
# entries in the description, which are in the same order).
subset_run <- function(run, keep) {
  if (length(keep) == length(run$threads)) return(run)
  run$threads <- run$threads[keep]
  if (!is.null(run$ranks)) run$ranks <- run$ranks[keep]
  for (key in c("ranks", "threads")) {
    if (!is.null(run$meta[[key]])) run$meta[[key]] <- run$meta[[key]][keep]
  }
  run
}

# What a caption adds when a plot shows some units only.
detail_note <- function(shown, of, what = "CPUs", where = "the ranking and the heat map") {
  if (shown == of) return("")
  sprintf(" Shown: the %d noisiest of the %d %s and the quietest; every one is in %s.",
    shown - 1, of, what, where)
}

# The summary's rows (run, host, cpu) of the units shown in detail, per run.
detail_rows <- function(summary) {
  # the rows' numbers, not .SD's copies of every column of a million rows
  summary[summary[, .I[detail_positions(noise_percent)], by = run]$V1, .(run, host, cpu)]
}

# A table the page shows of a run's CPUs (rows with run, host and cpu) or
# hosts (run and host): of a run of more than detail_units_max, the rows of
# those shown in detail, in their order, and a caption saying how many of
# how many, the CSV holding every one. The page stays one page whatever the
# machine.
page_table <- function(dt, summary, csv) {
  if (is.null(dt) || nrow(dt) == 0 || !all(c("run", "host") %in% names(dt))) {
    return(list(rows = dt, note = ""))
  }
  keys <- if ("cpu" %in% names(dt)) {
    detail_rows(summary)
  } else {
    hosts <- summary[, .(noise_percent = mean(noise_percent)), by = .(run, host)]
    hosts[hosts[, .I[detail_positions(noise_percent)], by = run]$V1, .(run, host)]
  }
  # joined, not pasted into keys: a million rows' tables
  keep <- !is.na(unique(keys)[dt, on = names(keys), which = TRUE, mult = "first"])
  if (all(keep)) return(list(rows = dt, note = ""))
  what <- if ("cpu" %in% names(dt)) "CPUs" else "hosts"
  list(rows = dt[keep], note = sprintf(paste(" Shown: the rows of the %d noisiest %s of each",
    "run and its quietest (%d of %d rows); %s has every one."), detail_units_max - 1, what,
    sum(keep), nrow(dt), csv))
}

# Every unit of a run, sorted by the share of time it lost: the whole run
# in one curve however many units it has, with its median and 99th
# percentile marked, and detours told apart from running slow where the
# kernel split them.
plot_unit_ranking <- function(noise, title) {
  d <- noise[order(-noise_percent)][, position := seq_len(.N)]
  marks <- data.table(
    what = c("median", "99th percentile"),
    percent = stats::quantile(d$noise_percent, c(0.5, 0.99), names = FALSE, na.rm = TRUE)
  )
  d <- ranking_points(d)
  # Sorted by the headline; beside it its whole (the losses) and the work's part.
  long <- if (all(is.na(d$stolen_percent))) {
    d[, .(position, percent = noise_percent, part = "all noise")]
  } else {
    rbind(d[, .(position, percent = lost_percent, part = "lost in all")],
      d[, .(position, percent = stolen_percent, part = "stolen")],
      d[, .(position, percent = slowdown_percent, part = "the work's slowdown")])[!is.na(percent)]
  }
  ggplot2::ggplot(long, ggplot2::aes(position, percent, colour = part)) +
    ggplot2::geom_hline(data = marks, ggplot2::aes(yintercept = percent, linetype = what),
      colour = "grey40") +
    ggplot2::geom_step(linewidth = 0.4) +
    ggplot2::geom_point(data = long[position <= detail_units_max - 1], size = 1) +
    ggplot2::scale_colour_manual(values = c(`all noise` = "black", `lost in all` = "black",
      stolen = "firebrick",
      `the work's slowdown` = "steelblue")) +
    ggplot2::scale_x_continuous(labels = scales::label_comma()) +
    ggplot2::labs(title = title, x = "CPUs, the noisiest first", y = "share of the CPU's time (%)",
      colour = NULL, linetype = NULL) +
    theme_noise()
}

# The ranking's curve keeps at most ranking_points_max points, a picture's
# width of them: the ranking_points_single noisiest CPUs one a point (the
# step a few bad ones make at the left), the others in runs of equal
# length, each drawn at its first CPU with the runs' loss (all of it: the
# run's first, the largest, as they are sorted; detours and running slow:
# stolen and the work's slowdown: their means). A million CPUs' points cost ggplot2 1.6 GB and 5 s.
ranking_points_max <- 2000
ranking_points_single <- 500

# d: the units sorted, noisiest first, with position
ranking_points <- function(d) {
  n <- nrow(d)
  if (n <= ranking_points_max) return(d)
  single <- ranking_points_single
  runs <- ranking_points_max - single
  # in doubles: 10^7 positions times 1,500 runs overflow an integer
  d[, point := ifelse(position <= single, position,
    single + 1 + floor((position - single - 1) * runs / (n - single)))]
  d[, .(position = position[1], noise_percent = noise_percent[1],
    stolen_percent = mean(stolen_percent), slowdown_percent = mean(slowdown_percent)), by = point]
}

# A run over several nodes, every core of it: a row per node, sorted by the
# node's mean noise (the noisiest on top), a column per CPU number, the
# colour the share of time the core lost. A bad node is a dark row, a bad
# core on every node (a housekeeping CPU, an interrupt's) a dark column.
# Solid lines part the NUMA domains, dotted ones the CPUs that are a core's
# second (third, ...) hardware thread from its first (the nodes' layout as
# most of them have it).
plot_core_map <- function(noise, title) {
  nodes <- noise[, .(lost = mean(noise_percent, na.rm = TRUE)), by = host][order(lost)]
  p <- plot_loss_tiles(noise[, .(x = cpu, row = factor(host, levels = nodes$host),
    noise_percent)], "CPU", "nodes", title)
  edges <- cpu_layout_edges(noise)
  if (nrow(edges)) {
    p <- p + ggplot2::geom_vline(data = edges, ggplot2::aes(xintercept = x, linetype = edge),
      colour = "grey30", linewidth = 0.4) +
      ggplot2::scale_linetype_manual(values = c(`NUMA domain` = "solid",
        `SMT sibling` = "dotted"), name = NULL)
  }
  p
}

# Where, along the CPU numbers, the NUMA domain or the SMT thread changes:
# x between two CPUs, and which edge it is.
cpu_layout_edges <- function(noise) {
  if (!all(c("numa_node", "smt_thread") %in% names(noise))) return(data.table())
  on_cpus <- noise[!is.na(cpu) & cpu >= 0]
  cpus <- sort(unique(on_cpus$cpu))
  # each CPU number's commonest value over the nodes (counted: 10^4 nodes)
  commonest <- function(column) {
    counts <- on_cpus[!is.na(get(column)), .N, by = c("cpu", column)]
    setorderv(counts, c("cpu", "N", column), c(1L, -1L, 1L))
    counts <- counts[!duplicated(cpu)]
    counts[[column]][match(cpus, counts$cpu)]
  }
  layout <- data.table(cpu = cpus, numa_node = commonest("numa_node"),
    smt_thread = commonest("smt_thread"))
  changed <- function(v) c(FALSE, !is.na(v[-1]) & !is.na(v[-length(v)]) & v[-1] != v[-length(v)])
  rbind(layout[changed(numa_node), .(x = cpu - 0.5, edge = "NUMA domain")],
    layout[changed(smt_thread), .(x = cpu - 0.5, edge = "SMT sibling")])
}

