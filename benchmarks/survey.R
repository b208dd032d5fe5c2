#!/usr/bin/env Rscript
# A synthetic FWQ survey of any size, written as fwq_mpi writes one run
# (OUT/fwq.json and OUT/fwq_<rank>_times.dat, or beyond 4,096 ranks each
# node's fwq_node<K>.json, its ranks table fwq_node<K>_ranks.csv and its
# data file fwq_node<K>_times.dat), for measuring the analysis at
# Tier-0 size on one machine:
#
#   Rscript benchmarks/survey.R SOURCE.json OUT HOSTS RANKS_PER_HOST SAMPLES \
#     [BAD_NODES [BAD_CORES [SEED]]] [--xnames [--bad-cabinets N] [--bad-chassis N]]
#
# Each rank's samples are a real run's (SOURCE.json, rank 0: an FWQ run of
# this machine), in their order, from a random offset among those whose
# windows are alike (alike_windows), wrapped around: every rank has the
# machine's real noise, its bursts and its stalls. Planted on
# top: BAD_NODES whole nodes (default 2) and BAD_CORES single cores of other
# nodes (default 3) lose a detour every 1 ms (or twice a stretch, where a
# rank's 100 stretches are shorter), the way a node with a runaway
# daemon or a core taking a device's interrupts does (planted_share says
# how long). OUT/planted.csv says which (scope node or core, host, cpu; cpu
# empty for a node), as the report's outliers.csv names them, the share
# of time added (added_percent) and whether it can stand out (stands_out).
# With --xnames the hosts are named as HPE Cray EX names its nodes
# (x<cabinet>c<chassis>s<slot>b0n<node>: 16 nodes a chassis, 8 chassis a
# cabinet), and whole cabinets and chassis can be planted too (scope
# cabinet or chassis, its name in location).
# The kernel's split into detours and running slow is left out of the
# ranks' entries: it was the source's, not theirs.

planted_period_ns <- 1e6
planted_least_share <- 0.1
# what is planted on a source too noisy for any share to stand out: a
# detour as long as the time between them, twice the time
planted_most_share <- 1

# What a kernel computes of its samples and writes into its JSON (stats,
# stretches, tails), as the package's tests compute it for their synthetic
# runs: their helper file, read once the package's library path is set, in
# an environment that sees the package's internals.
kernel_figures <- NULL
use_kernel_figures <- function(benchmarks_dir) {
  env <- new.env(parent = asNamespace("noisebench"))
  sys.source(file.path(benchmarks_dir, "..", "analysis", "tests", "testthat",
    "helper-kernel-figures.R"), envir = env)
  kernel_figures <<- env
}

# Adds a detour of `loss` ticks (whole ticks, as a kernel measures) to each
# sample in which one of a periodic series (every `period` ticks from
# `phase`) falls: samples follow each
# other, so a sample's end is the running sum of the samples up to it.
add_periodic <- function(x, period, loss, phase) {
  ends <- cumsum(x) + phase
  x + round(loss * diff(c(floor(phase / period), floor(ends / period))))
}

# The planted detours' time over the time they land in: a tenth, or more
# where the source's stretches spread so widely that a tenth would stay
# within the finder's cut (outliers.R's outlier_z robust standard
# deviations). Then it is what puts a planted unit twice the cut beyond
# the others, as the finder measures the others, on the stretches of up to
# 256 of the survey's unplanted ranks, so that the benchmark asks the
# finder to find what it defines as an outlier, whatever the day the
# source was measured on.
# A share f of added time raises a stretch's loss p (a fraction) by
# f (1 - p) / (1 + f) (lost_percent: 1 - n best / total). No share can
# where the source's stretches lose so much, so unevenly, that p + gap
# reaches 1; where it would take more than planted_most_share (a detour
# longer than the time between them, a planted rank's run over twice the
# others', its stretches mostly empty); or where the ranks' windows of the
# source differ so much that an unplanted rank's typical stretch passes
# the cut on its own (a window inside one of the source's slow stretches,
# which the finder rightly calls noisier). Then the survey is still
# written, for what does not ask the finder (the page at scale):
# planted_most_share, marked as not standing out, a message saying why.
planted_share <- function(clean, tpn, best, run_s) {
  y <- windows_yardstick(clean, tpn, best, run_s)
  typical <- y$typical
  p <- y$centre / 100
  spread <- y$spread / 100
  gap <- 2 * noisebench:::outlier_z * spread
  share <- if (p + gap < 1) max(planted_least_share, gap / (1 - p - gap)) else Inf
  alone <- sum((typical / 100 - p) / spread > noisebench:::outlier_z)
  why <- if (share > planted_most_share) {
    sprintf(paste("the source's stretches lose %.0f%% +- %.0f%%: a planted unit would need",
      "%s more time to stand out"), 100 * p, 100 * spread,
      if (is.finite(share)) sprintf("%.0f%%", 100 * share) else "all the")
  } else if (alone > 0) {
    sprintf(paste("the source's windows of %d samples differ: %d of %d unplanted ranks",
      "stand out on their own"), length(clean[[1]]), alone, length(clean))
  }
  if (!is.null(why)) {
    message(sprintf("survey.R: %s; planted %.0f%% of time more, not judged", why,
      100 * planted_most_share))
    return(structure(planted_most_share, stands_out = FALSE))
  }
  structure(share, stands_out = TRUE)
}

# Each window's (a vector of samples, ticks) typical stretch and the
# yardstick the finder would hold it against, as outliers.R's
# against_others does: the median of the windows' typical stretches
# (centre) and the median distance of their stretches from their own
# typical one (spread, scaled as stats::mad), all in % of time lost.
# run_s: the run's length, which sets the stretches' width (the longest
# rank's, stretches.h).
windows_yardstick <- function(clean, tpn, best, run_s) {
  percent <- lapply(clean, function(x) {
    s <- kernel_figures$sample_stretches(cumsum(x) / tpn / 1e9, x, run_s)
    # a stretch no sample ended in (a stall longer than it) has no loss of
    # its own: the sample that ended after it holds it
    keep <- s$n > 0
    noisebench:::lost_percent("fwq", s$sum[keep], s$n[keep], best)
  })
  typical <- vapply(percent, stats::median, numeric(1))
  list(typical = typical, centre = stats::median(typical),
    spread = stats::mad(unlist(Map(`-`, percent, typical)), center = 0))
}

longest_s <- function(windows, tpn) max(vapply(windows, sum, numeric(1))) / tpn / 1e9

# Which of the source's windows (a list of vectors of samples) are alike:
# those whose typical stretch lies within half the finder's cut of the
# others', their stretches as wide as a run `widen` times the longest
# window's cuts them (a survey's planted ranks run longer). A window of a
# few thousand samples can sit inside one of this machine's slow stretches
# (a vCPU at 60% for a second), and such a rank the finder rightly calls
# noisier: of 10^6 ranks, thousands would stand out unplanted, and the
# benchmark could not tell finding what was planted from finding the
# source's own slow seconds. Each rank keeps its window's bursts and stalls.
alike_windows <- function(windows, tpn, best, widen = 1) {
  run_s <- widen * longest_s(windows, tpn)
  keep <- seq_along(windows)
  # the windows kept are held against each other again until none is left
  # out: those left out widened the yardstick the others were kept by
  repeat {
    y <- windows_yardstick(windows[keep], tpn, best, run_s)
    cut <- noisebench:::outlier_z / 2 * y$spread
    alike <- keep[abs(y$typical - y$centre) <= cut]
    if (length(alike) == length(keep) || !length(alike)) return(alike)
    keep <- alike
  }
}

# Which units are planted: `planted` is the scope ("cabinet", "chassis",
# "node" or "core") on the bad units, each inside good ones of the levels
# above it, NA elsewhere; `location` the planted cabinet's or chassis's
# name. Rank 0's node, chassis and cabinet stay good. xnames: the hosts
# named as HPE Cray EX names its nodes (xname_layout).
survey_layout <- function(hosts, per_host, bad_nodes, bad_cores, xnames = FALSE,
                          bad_cabinets = 0, bad_chassis = 0) {
  units <- data.table::CJ(node = seq_len(hosts), cpu = seq_len(per_host) - 1L)
  units[, `:=`(rank = .I - 1L, planted = NA_character_, location = NA_character_)]
  if (xnames) {
    units[, c("host", "cabinet", "chassis") := xname_layout(node)]
  } else {
    units[, `:=`(host = sprintf("nb%05d", node), cabinet = NA_character_,
      chassis = NA_character_)]
  }
  # k units of the level, spread over those neither planted nor rank 0's
  plant <- function(level, k) {
    good <- units[is.na(planted) & !get(level) %in% get(level)[1]]
    names <- unique(good[[level]])
    if (k == 0 || !length(names)) return(invisible())
    bad <- names[unique(pmax(1, round(seq_len(k) * length(names) / (k + 1))))]
    units[get(level) %in% bad, `:=`(planted = level,
      location = if (level %in% c("cabinet", "chassis")) get(level) else NA_character_)]
  }
  if (xnames) {
    plant("cabinet", bad_cabinets)
    plant("chassis", bad_chassis)
  }
  plant("node", bad_nodes)
  spoilt <- unique(units[!is.na(planted)]$node)
  good <- units[!node %in% spoilt & node > 1]
  if (bad_cores > 0 && nrow(good)) {
    pick <- good[round(seq(1, nrow(good), length.out = min(bad_cores, nrow(good))))]$rank
    units[rank %in% pick, planted := "core"]
  }
  units[]
}

# The host names, cabinets and chassis of nodes 1, 2, ... as HPE Cray EX
# names them: 2 nodes a slot's board, 8 slots a chassis, 8 chassis a
# cabinet (the cabinets numbered from x1000)
xname_layout <- function(node) {
  i <- node - 1L
  cabinet <- sprintf("x%d", 1000L + i %/% 128L)
  chassis <- sprintf("%sc%d", cabinet, (i %% 128L) %/% 16L)
  list(sprintf("%ss%db0n%d", chassis, (i %% 16L) %/% 2L, i %% 2L), cabinet, chassis)
}

# Where a CPU sits on a node of per_host CPUs laid out as Linux numbers a
# two-socket node with SMT 2: the first half the cores' first hardware
# threads, the second half their siblings, each half split between two
# NUMA domains.
node_place <- function(cpu, per_host) {
  if (per_host < 4) return(list())
  cores <- per_host %/% 2
  core <- cpu %% cores
  list(numa_node = as.integer(core >= cores %/% 2), package = as.integer(core >= cores %/% 2),
    core = core, smt_thread = as.integer(cpu >= cores))
}

write_survey <- function(source, out, hosts, per_host, samples, bad_nodes = 2, bad_cores = 3,
                         seed = 1, xnames = FALSE, bad_cabinets = 0, bad_chassis = 0) {
  set.seed(seed)
  meta <- jsonlite::fromJSON(source, simplifyVector = FALSE)
  if (!identical(meta$kernel, "fwq")) stop(source, ": not an FWQ run", call. = FALSE)
  entry <- meta$ranks[[1]]
  # doubles: the running sums of 10^5 samples of ticks pass the largest integer
  real <- as.numeric(data.table::fread(file.path(dirname(source), entry$files[[1]]),
    header = FALSE)[[1]])
  tpn <- entry$ticks_per_ns %||% meta$ticks_per_ns
  edges_ns <- as.numeric(unlist(meta$loss_histogram$edges_ns))
  if (!length(edges_ns)) {
    stop(source, ": no loss_histogram (an older noisebench's run)", call. = FALSE)
  }
  total <- list(samples = numeric(length(edges_ns) + 1), lost_ns = numeric(length(edges_ns) + 1))
  seconds <- 0
  units <- survey_layout(hosts, per_host, bad_nodes, bad_cores, xnames, bad_cabinets,
    bad_chassis)
  dir.create(out, recursive = TRUE, showWarnings = FALSE)
  keep <- setdiff(names(entry), c("stats", "tails", "stretches", "lost_percent", "stolen_percent",
    "stolen_ci95_low", "stolen_ci95_high", "stolen_events", "slowdown_percent",
    "variation_percent", "resolution_us", "threshold_us", "coarse",
    "kernel_counts", "steal_ms", "files",
    "samples", "rank", "host", "cpu", "numa_node", "package", "core", "smt_thread"))
  starts <- sample.int(length(real), 1024, replace = TRUE)
  windows <- lapply(starts, function(o) real[(o + seq_len(samples) - 1) %% length(real) + 1])
  # the finder's typical stretch is a median: a detour in fewer than half a
  # rank's stretches (a run of a few thousand samples, stretches shorter
  # than 1 ms) would leave it where it was
  period <- min(planted_period_ns, samples * stats::median(real) / tpn /
    noisebench:::stretches_per_run / 2) * tpn
  phases <- stats::runif(nrow(units), 0, period)
  alike <- alike_windows(windows, tpn, min(real))
  share <- planted_share(windows[utils::head(if (length(alike)) alike else seq_along(windows),
    256)], tpn, min(real), longest_s(windows, tpn))
  stands_out <- attr(share, "stands_out")
  share <- as.numeric(share)
  alike <- alike_windows(windows, tpn, min(real), widen = 1 + share)
  message(sprintf("survey.R: %d of %d windows of %d samples alike (within half the cut)",
    length(alike), length(windows), samples))
  if (!length(alike)) alike <- seq_along(windows)
  pick <- alike[sample.int(length(alike), nrow(units), replace = TRUE)]
  clean_of <- function(i) windows[[pick[i]]]
  samples_of <- function(i) {
    x <- clean_of(i)
    if (is.na(units$planted[i])) return(x)
    add_periodic(x, period, share * period, phases[i])
  }
  # the stretches' width is the whole run's (stretches.h): the longest rank's
  longest <- function() {
    max(vapply(seq_len(nrow(units)), function(i) sum(samples_of(i)), numeric(1))) / tpn / 1e9
  }
  run_s <- longest()
  # an alike window whose typical stretch, cut as this run cuts it, lies
  # beyond half the cut after all (half slow, half not: it moves with where
  # the stretches fall) is replaced on the unplanted ranks that drew it
  y <- windows_yardstick(windows[alike], tpn, min(real), run_s)
  moved <- alike[abs(y$typical - y$centre) > noisebench:::outlier_z / 2 * y$spread]
  if (length(moved) && length(moved) < length(alike)) {
    redraw <- which(pick %in% moved & is.na(units$planted))
    stay <- setdiff(alike, moved)
    pick[redraw] <- stay[sample.int(length(stay), length(redraw), replace = TRUE)]
    run_s <- longest()
  }
  # as the kernels lay out as many ranks (kernels.json's node_files): their
  # entries in PREFIX.json and a data file each, or beyond inline_ranks a
  # file of entries a node and a data file a node, each rank's data in its
  # range of it
  node_files <- noisebench:::noisebench_kernels$node_files
  by_node <- nrow(units) > node_files$inline_ranks
  hosts <- unique(units$host)
  node_name <- function(format, k, suffix = "times.dat") {
    name <- sub("{prefix}", "fwq", sub("{node}", k, format, fixed = TRUE), fixed = TRUE)
    sub("{suffix}", suffix, name, fixed = TRUE)
  }
  node_of <- match(units$host, hosts)
  # the source's other members, the same for every rank (its tick rate, its
  # timer's cost, ...)
  same <- Filter(function(v) length(v) == 1 && !is.list(v), entry[keep])
  inline <- list()
  if (by_node) {
    meta$node_files <- vapply(seq_along(hosts) - 1, node_name, "",
      format = node_files$file_name)
    meta$ranks_files <- vapply(seq_along(hosts) - 1, node_name, "",
      format = node_files$data_file_name, suffix = node_files$ranks_suffix)
  }
  # a node at a time, its ranks' samples a matrix (a column a rank)
  for (k in seq_along(hosts)) {
    rows <- which(node_of == k)
    u <- units[rows]
    x <- matrix(vapply(rows, samples_of, numeric(samples)), nrow = samples)
    # whole ticks, as a kernel writes them: each rank's bytes are its
    # numbers' digits and newlines
    bytes <- colSums(matrix(whole_digits(x) + 1, nrow = samples))
    if (by_node) {
      files <- rep(node_name(node_files$data_file_name, k - 1), length(rows))
      data.table::fwrite(list(as.vector(x)), file.path(out, files[1]), col.names = FALSE,
        scipen = 50)
      ranges <- list(cumsum(bytes) - bytes, bytes)
    } else {
      files <- sprintf("fwq_%d_times.dat", u$rank)
      for (j in seq_along(rows)) {
        data.table::fwrite(list(x[, j]), file.path(out, files[j]), col.names = FALSE,
          scipen = 50)
      }
      ranges <- NULL
    }
    fig <- rank_figures(x, tpn, run_s, edges_ns)
    total <- Map(`+`, total, lapply(fig$histogram, rowSums, na.rm = TRUE))
    seconds <- seconds + sum(fig$seconds)
    d <- ranks_table(u, samples, files, ranges, fig, node_place(u$cpu, per_host), same, tpn)
    if (by_node) {
      writeLines(c(sprintf('{"node":%d,"host":%s,"ranks":[', k - 1, json_string(hosts[k])),
        paste0(table_json(d), c(rep(",", nrow(d) - 1), "")), "]}"),
        file.path(out, meta$node_files[k]))
      data.table::fwrite(d, file.path(out, meta$ranks_files[k]), scipen = 50)
    } else {
      inline[[k]] <- table_json(d)
    }
  }
  meta$loss_histogram <- c(list(participants = nrow(units), seconds = seconds,
    edges_ns = edges_ns), trim_histogram(total))
  machine <- meta$machines[[1]] %||% meta$machine
  meta$machines <- lapply(unique(units$host), function(h) {
    m <- machine
    m$hostname <- h
    m
  })
  meta$frontend <- "mpi"
  meta$requirements <- kernel_figures$default_requirements
  meta$ranks_in_run <- nrow(units)
  meta$ranks <- NULL
  text <- jsonlite::toJSON(meta, auto_unbox = TRUE, null = "null", digits = NA)
  if (!by_node) {
    # the ranks' entries, a line each, as the kernels write them
    lines <- unlist(inline)
    text <- paste0(sub("}$", "", text), ',"ranks":[\n',
      paste(lines, collapse = ",\n"), "\n]}")
  }
  writeLines(text, file.path(out, "fwq.json"))
  data.table::fwrite(rbind(
    unique(units[planted %in% c("cabinet", "chassis"), .(scope = planted, location,
      host = NA_character_, cpu = NA_integer_)]),
    unique(units[planted == "node", .(scope = planted, location, host, cpu = NA_integer_)]),
    units[planted == "core", .(scope = planted, location, host, cpu)])[
    order(match(scope, c("cabinet", "chassis", "node", "core")))][,
    `:=`(added_percent = round(100 * share, 1), stands_out = stands_out)],
    file.path(out, "planted.csv"))
  invisible(units)
}

`%||%` <- function(a, b) if (is.null(a)) b else a

# What the kernel computes of each rank's samples (a column of x, ticks)
# and writes into its entry, as the package's tests compute it a rank at a
# time (helper-kernel-figures.R: sample_stats, loss_tails, sample_stretches,
# and the loss histogram of tails.h), for a node's ranks at once: a list of
# figures, each a vector of a value a rank or a matrix of a column a rank
# (NA past the rank's last used bucket or stretch, as the kernels trim them).
rank_figures <- function(x, tpn, run_s, edges_ns) {
  n <- nrow(x)
  ranks <- ncol(x)
  each <- rep(seq_len(ranks), each = n)
  total <- colSums(x)
  d <- x - rep(total / n, each = n)
  d2 <- d * d
  m2 <- colSums(d2) / n
  stats <- list(min = apply(x, 2, min), max = apply(x, 2, max), mean = total / n,
    std = if (n > 1) sqrt(m2 * n / (n - 1)) else NA_real_,
    kurtosis = ifelse(m2 > 0, colSums(d2 * d2) / n / m2^2, NaN),
    skewness = ifelse(m2 > 0, colSums(d2 * d) / n / m2^1.5, NaN))
  seconds <- total / tpn / 1e9
  loss_ns <- (x - rep(stats$min, each = n)) / tpn
  sorted <- matrix(apply(loss_ns / 1e3, 2, sort), nrow = n)
  probs <- noisebench:::tail_probs
  tails <- c(
    stats::setNames(lapply(pmax(1, ceiling(probs * n)), function(k) sorted[k, ]),
      paste0(names(probs), "_us")),
    list(max_us = sorted[n, ]),
    stats::setNames(lapply(noisebench:::tail_thresholds_us, function(th) {
      colSums(sorted > th) / (seconds / 3600)
    }), paste0("above_", noisebench:::tail_thresholds_us, "us_per_hour")))
  buckets <- length(edges_ns) + 1
  key <- findInterval(loss_ns, edges_ns) + 1 + (each - 1) * buckets
  histogram <- list(samples = matrix(tabulate(key, buckets * ranks), nrow = buckets),
    lost_ns = matrix(sums_by(loss_ns, key, buckets * ranks), nrow = buckets))
  width <- run_s / noisebench:::stretches_per_run
  end_s <- apply(x, 2, cumsum) / tpn / 1e9
  key <- pmin(pmax(ceiling(end_s / width) - 1, 0), noisebench:::stretches_per_run - 1) + 1 +
    (each - 1) * noisebench:::stretches_per_run
  stretches <- list(n = matrix(tabulate(key, noisebench:::stretches_per_run * ranks), ncol = ranks),
    sum = matrix(sums_by(x, key, noisebench:::stretches_per_run * ranks), ncol = ranks))
  list(stats = stats, tails = tails, seconds = seconds, base = stats$min,
    histogram = lapply(histogram, trim_columns, used = histogram$samples > 0),
    width_s = width, stretches = lapply(stretches, trim_columns, used = stretches$n > 0))
}

# the digits of whole numbers from 0 to below 10^15, by comparisons, which
# are exact where log10 is not
whole_digits <- function(x) {
  digits <- 1
  for (p in 1:14) digits <- digits + (x >= 10^p)
  digits
}

# value summed by key (1..size), 0 where no value has the key
sums_by <- function(value, key, size) {
  out <- numeric(size)
  s <- rowsum(as.vector(value), as.vector(key))
  out[as.integer(rownames(s))] <- s[, 1]
  out
}

# each column NA past its last used row
trim_columns <- function(m, used) {
  last <- apply(used, 2, function(u) max(c(0, which(u))))
  m[row(m) > rep(last, each = nrow(m))] <- NA
  m
}

# A node's ranks as their table (kernels.json's node_files.ranks_about): a
# row a rank, its entry's members in columns named by their paths, in the
# order the kernels write them.
ranks_table <- function(u, samples, files, ranges, fig, place, same, tpn) {
  # an array's places no rank of the node used are no column
  wide <- function(prefix, m) {
    m <- m[seq_len(max(c(0, which(rowSums(!is.na(m)) > 0)))), , drop = FALSE]
    stats::setNames(as.data.table(t(m)), paste0(prefix, ".", seq_len(nrow(m))))
  }
  columns <- c(list(rank = u$rank, host = u$host, cpu = u$cpu), place,
    list(samples = rep(samples, nrow(u))), same, list(files.1 = files),
    if (!is.null(ranges)) list(file_ranges.1.1 = ranges[[1]], file_ranges.1.2 = ranges[[2]]),
    stats::setNames(fig$stats, paste0("stats.", names(fig$stats))),
    stats::setNames(kernel_figures$fwq_requirements_table(fig$stats), paste0("requirements.",
      c("judged", "unmet", "unmet_rules"))),
    stats::setNames(fig$tails, paste0("tails.", names(fig$tails))),
    list(tails.loss.base = fig$base, tails.loss.us_per_unit = 1 / tpn / 1e3,
      tails.loss.falling = FALSE, tails.loss.seconds = fig$seconds))
  cbind(as.data.table(columns), wide("tails.histogram.samples", fig$histogram$samples),
    wide("tails.histogram.lost_ns", round(fig$histogram$lost_ns)),
    data.table(stretches.width_s = fig$width_s),
    wide("stretches.n", fig$stretches$n), wide("stretches.sum", fig$stretches$sum))
}

# Each row of a ranks table as the JSON entry it flattens (the node files'
# ranks[], a line each): its columns' paths made objects again, and arrays
# where the keys are places, an array's empty places at its end left out.
table_json <- function(d) {
  paths <- strsplit(names(d), ".", fixed = TRUE)
  value <- function(v) {
    if (is.character(v)) return(ifelse(is.na(v), NA, json_string(v)))
    if (is.logical(v)) return(ifelse(is.na(v), NA, ifelse(v, "true", "false")))
    ifelse(is.na(v), NA, formatC(v, digits = 15, format = "g"))
  }
  level <- function(at, depth) {
    keys <- vapply(paths[at], `[`, "", depth)
    firsts <- unique(keys)
    parts <- lapply(firsts, function(key) {
      mine <- at[keys == key]
      if (length(mine) == 1 && length(paths[[mine]]) == depth) return(value(d[[mine]]))
      level(mine, depth + 1)
    })
    if (all(grepl("^[0-9]+$", firsts))) {
      # the empty places are at the end: dropped with their commas
      text <- do.call(paste, c(lapply(parts, function(p) ifelse(is.na(p), "", p)), sep = ","))
      return(paste0("[", sub(",+$", "", text), "]"))
    }
    members <- Map(function(key, p) ifelse(is.na(p), paste0('"', key, '":null'),
      paste0('"', key, '":', p)), firsts, parts)
    paste0("{", do.call(paste, c(unname(members), sep = ",")), "}")
  }
  level(seq_along(paths), 1)
}

json_string <- function(x) {
  paste0('"', gsub('(["\\])', "\\\\\\1", x), '"')
}

# as the kernels write it: the empty buckets beyond the last sample left out
trim_histogram <- function(h) {
  used <- max(c(0, which(h$samples > 0)))
  list(samples = h$samples[seq_len(used)], lost_ns = round(h$lost_ns[seq_len(used)]))
}

if (sys.nframe() == 0) {
  # the package as make builds it
  script <- sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))
  .libPaths(c(file.path(dirname(script), "..", "build", "lib", "R"), .libPaths()))
  suppressPackageStartupMessages(library(data.table))
  use_kernel_figures(dirname(script))
  args <- commandArgs(trailingOnly = TRUE)
  option <- function(name) {
    at <- match(name, args)
    if (is.na(at)) return(0)
    value <- args[at + 1]
    args <<- args[-c(at, at + 1)]
    as.numeric(value)
  }
  bad_cabinets <- option("--bad-cabinets")
  bad_chassis <- option("--bad-chassis")
  xnames <- "--xnames" %in% args
  args <- args[args != "--xnames"]
  n <- suppressWarnings(as.numeric(args[-(1:2)]))
  if (length(args) < 5 || anyNA(n) || (!xnames && bad_cabinets + bad_chassis > 0)) {
    stop("usage: survey.R SOURCE.json OUT HOSTS RANKS_PER_HOST SAMPLES ",
      "[BAD_NODES [BAD_CORES [SEED]]] [--xnames [--bad-cabinets N] [--bad-chassis N]]",
      call. = FALSE)
  }
  write_survey(args[1], args[2], n[1], n[2], n[3], if (length(n) > 3) n[4] else 2,
    if (length(n) > 4) n[5] else 3, if (length(n) > 5) n[6] else 1, xnames, bad_cabinets,
    bad_chassis)
}
