# The whole system's outliers, what an acceptance team reads first: the
# cabinets and chassis (where the machine's levels are known: levels.R)
# noisier than the others of their level, the nodes noisier than the other
# nodes of their run, and the cores noisier than the other cores of their
# node, each with why (detours or running slow, and the class of cause that
# took most where the run was traced). A unit's nodes and cores are not
# listed again: a bad chassis is one line.

# Iglewicz and Hoaglin's cut for the modified z-score (median and MAD): a
# value further than this many robust standard deviations is an outlier.
outlier_z <- 3.5

# The first index of each range from..to at which reached(index, which
# ranges) holds, or to + 1 where none does: a bisection of every range at
# once, reached being false and then true along each.
first_reaching <- function(from, to, reached) {
  lo <- as.numeric(from)
  hi <- as.numeric(to) + 1
  repeat {
    open <- which(lo < hi)
    if (!length(open)) return(lo)
    mid <- (lo[open] + hi[open]) %/% 2
    now <- reached(mid, open)
    hi[open] <- ifelse(now, mid, hi[open])
    lo[open] <- ifelse(now, lo[open], mid + 1)
  }
}

# How many of each slice sorted[from + 1:len] lie at or below v, one query
# an element of from, len and v: a bisection of all the slices at once,
# which findInterval, checking the whole vector is sorted at each call,
# cannot do at a cost of the slices' length's log.
count_upto <- function(sorted, from, len, v) {
  lo <- numeric(length(v))
  hi <- as.numeric(len)
  # as many halvings as the longest slice needs, each on every query: a
  # settled one (lo == hi) looks at its own last element and stays put
  for (step in seq_len(ceiling(log2(max(c(len, 0)) + 1)))) {
    open <- lo < hi
    mid <- floor((lo + hi + 1) / 2)
    x <- sorted[from + pmax(mid, 1)]
    at_most <- x <= v
    lo <- lo + (mid - lo) * (open & at_most)
    hi <- hi - (hi - mid + 1) * (open & !at_most)
  }
  lo
}

# With this many members or more, a member's own values stay in the
# yardstick it is held against: they are at most a 32nd of it, and move its
# medians by at most about a 64th of its values. With fewer they would be a
# large part of it (an eighth of eight nodes'), and are left out.
yardstick_leave_in <- 32

# The median of each member's group without the member's own values, for
# every member at once: copying the others once per member would cost each
# group its size squared and an R call a member (10^4 nodes of 16 cores:
# 1.6 * 10^5 calls copying 2.4 * 10^8 stretches). Each order statistic of
# "the others" is found by bisection instead, weighing the group's values
# at or below a value less the member's own. value, group, member, weight:
# one element a value (a value of weight w stands for w values: a sketch's,
# sketch_sorted); member names unique across groups. One row per member,
# in order of first appearance: member, group, centre (NA where the group
# has no other member).
others_median <- function(value, group, member, weight = rep(1, length(value))) {
  first <- !duplicated(member)
  members <- data.table(member = member[first], group = group[first])
  # the values sorted by group, and by member: each one's slice, and the
  # weights summed along them
  slices <- function(of, names) {
    at <- match(of, names)
    o <- order(at, value)
    list(sorted = value[o], summed = c(0, cumsum(weight[o])), len = tabulate(at, length(names)))
  }
  groups <- slices(group, unique(members$group))
  own <- slices(member, members$member)
  g <- match(members$group, unique(members$group))
  g_from <- (cumsum(groups$len) - groups$len)[g]
  g_len <- groups$len[g]
  own_from <- cumsum(own$len) - own$len
  weight_upto <- function(s, from, len, v) {
    s$summed[from + count_upto(s$sorted, from, len, v) + 1] - s$summed[from + 1]
  }
  # the weight of the others of members `at` at or below v
  others_upto <- function(v, at) {
    weight_upto(groups, g_from[at], g_len[at], v) -
      weight_upto(own, own_from[at], own$len[at], v)
  }
  others <- groups$summed[g_from + g_len + 1] - groups$summed[g_from + 1] -
    (own$summed[own_from + own$len + 1] - own$summed[own_from + 1])
  value_at <- function(i, at = seq_along(g)) groups$sorted[g_from[at] + i]
  # the group's lowest value with more than (or, not beyond, at least) half
  # the others' weight at or below it: of n values of weight 1, the
  # (n + 1) %/% 2-th and the n %/% 2 + 1-th smallest, whose mean is the median
  half <- function(beyond) {
    value_at(first_reaching(rep(1, length(g)), g_len, function(i, at) {
      w <- others_upto(value_at(i, at), at)
      if (beyond) w > others[at] / 2 else w >= others[at] / 2
    }))
  }
  centre <- (half(FALSE) + half(TRUE)) / 2
  members[, centre := ifelse(others > 0, centre, NA_real_)][]
}

# The weighted median of value in each group (a value of weight w standing
# for w values): of weights 1, stats::median's.
weighted_median <- function(value, weight, group) {
  # data.table's own median per group (GForce) where every weight is 1: a
  # million CPUs' cores are held against their nodes' 10^8 stretches
  if (all(weight == 1)) return(data.table(group, value)[, .(centre = median(value)), by = group])
  d <- data.table(group, value, weight)
  setorder(d, group, value)
  d[, summed := cumsum(weight), by = group]
  d[, .(centre = (value[which.max(summed >= summed[.N] / 2)] +
    value[which.max(summed > summed[.N] / 2)]) / 2), by = group]
}

# Per member of each group: its typical stretch (the median of its 100
# stretches of the run, noise_over_time) against the other members of its
# group: the median of their typical stretches (centre) and the median
# distance of their stretches from their own typical one (spread, scaled
# to a standard deviation as stats::mad), and its robust z-score; NA where
# the group has one member. So the spread is the others' over their CPUs
# and over time, which makes two nodes enough to compare, while a second
# bad member adds its own spread, not its distance from the good ones
# (pooled about one median, its stretches would widen the yardstick of
# the first until neither stood out). bins: noise_over_time's rows with
# `group` and `member` columns (member names unique across groups); it
# holds a column `off` while this runs, rather than a copy of its rows.
against_others <- function(bins) {
  # median, not stats::median: data.table's own per group (GForce), which
  # 65,536 ranks' 100 stretches each need
  typical <- bins[, .(typical_percent = median(noise_percent)), by = .(group, member)]
  bins[, off := abs(noise_percent - typical$typical_percent[match(member, typical$member)])]
  on.exit(bins[, off := NULL])
  hold_against(typical, bins[, .(group, member, off, weight = 1)])
}

# against_others' yardsticks of members whose typical stretches are known
# (typical: group, member, typical_percent) and whose stretches' distances
# from them are given as values of a weight (offs: group, member, off,
# weight; a sketch's, or each stretch's of weight 1).
hold_against <- function(typical, offs) {
  typical <- copy(typical)[, members := .N, by = group]
  big <- typical[members >= yardstick_leave_in]
  if (nrow(big)) {
    mine <- if (nrow(big) == nrow(typical)) offs else offs[group %in% big$group]
    yardstick <- big[, .(centre = median(typical_percent)), by = group][
      weighted_median(mine$off, mine$weight, mine$group)[, .(group, spread = centre)],
      on = "group"]
    typical[yardstick, on = "group", `:=`(centre = i.centre, spread = i.spread)]
  }
  # fewer: the others' typical stretches by pairs (at most 31 x 30 a
  # group), their distances by counting
  small <- typical[members > 1 & members < yardstick_leave_in, .(group, member, typical_percent)]
  if (nrow(small)) {
    centres <- small[small, on = "group", allow.cartesian = TRUE, nomatch = NULL][
      member != i.member, .(centre = median(i.typical_percent)), by = member]
    spreads <- offs[group %in% small$group, others_median(off, group, member, weight)]
    typical[centres, on = "member", centre := i.centre]
    typical[spreads, on = "member", spread := i.centre]
  }
  typical[members == 1, `:=`(centre = NA_real_, spread = NA_real_)]
  typical[, spread := 1.4826 * spread]
  typical[, robust_z := ifelse(typical_percent == centre, 0, (typical_percent - centre) / spread)]
  typical[, outlier := !is.na(robust_z) & robust_z > outlier_z]
  typical[, members := NULL][]
}

# Each host of a run against the run's other hosts: each host's typical
# stretch exact, the distances of its stretches from it as its sketch
# (y: stretch_yardsticks(run)).
node_standing <- function(y) {
  hold_against(y$hosts[, .(group = 1L, member = host, typical_percent)],
    y$node_offs[, .(group = 1L, member = host, off = value, weight)])[,
    .(host = member, typical_percent, centre, spread, robust_z, outlier)]
}

# Each core against the other cores of its node, of the ranks of one or
# more whole hosts: b, noise_over_time's rows (best = "run") of those ranks.
# A run's units are its ranks, each on one host: a unit names a member.
# host_id: each row's host as a number (grouped faster than by its name).
core_standing <- function(b, host_id = match(b$host, unique(b$host))) {
  units <- b[!duplicated(unit), .(member = unit, host, unit, cpu)]
  against_others(b[, .(group = host_id, member = unit, noise_percent)])[
    units, on = "member"][, .(host, unit, cpu, typical_percent, centre, spread, robust_z,
    outlier)]
}

# The class of cause that held most of the losses' time of some units of
# a traced run (cause_shares' rows), and its share (%); NA untraced.
top_cause <- function(causes, units) {
  mine <- if (is.null(causes)) NULL else causes[unit %in% units]
  if (is.null(mine) || sum(mine$total_us) == 0) {
    return(data.table(class = NA_character_, share = NA_real_))
  }
  by_class <- mine[, .(us = sum(total_us)), by = class][order(-us)]
  data.table(class = by_class$class[1], share = 100 * by_class$us[1] / sum(by_class$us))
}

# Why a node or a core lost its time, in words: what the system stole and,
# apart, the work's slowdown (means over its ranks), and the class of cause
# that held most of its losses' time, where traced.
outlier_why <- function(stolen, slowdown, cause, cause_share) {
  split <- ifelse(is.na(stolen), "stolen time and the work's slowdown not told apart",
    sprintf("stolen %.3g%% of the time; the work's slowdown %.3g%%", stolen, slowdown))
  ifelse(is.na(cause), split, sprintf("%s; most of the losses' time: %s (%.0f%%)", split,
    cause, cause_share))
}

# The units of each level above the node (node_locations: cabinets, their
# chassis) noisier than the other units of their level, the largest level
# first, each unit held against the others as a node is (its typical
# stretch, the median of all its ranks' stretches, and their distances from
# it, taken from its hosts' sketches of their stretches); a unit inside one
# already named is that unit's story. One row per outlier: scope (the
# level), location (the unit), the hosts it holds, ranks and its standing.
# y: stretch_yardsticks(run).
level_standing <- function(y, locations) {
  covered <- character()
  rows <- list()
  values <- y$values
  for (level in location_levels(locations)) {
    unit <- locations[[level]][match(values$host, locations$host)]
    keep <- !is.na(unit)
    if (uniqueN(unit[keep]) < 2) next
    mine <- data.table(group = 1L, member = unit[keep], value = values$value[keep],
      weight = values$weight[keep])
    typical <- weighted_median(mine$value, mine$weight, mine$member)[,
      .(group = 1L, member = group, typical_percent = centre)]
    mine[, off := abs(value - typical$typical_percent[match(member, typical$member)])]
    flagged <- hold_against(typical, mine[, .(group, member, off, weight)])[outlier == TRUE]
    hosts <- lapply(flagged$member, function(u) locations$host[which(locations[[level]] == u)])
    inside <- vapply(hosts, function(h) any(h %in% covered), logical(1))
    covered <- c(covered, unlist(hosts))
    set(flagged, j = "hosts", value = list(hosts))
    rows[[level]] <- flagged[, scope := level][!inside]
  }
  rbindlist(rows)
}

# The finest unit above the node each host sits in (NA where none is known)
finest_location <- function(hosts, locations) {
  levels <- location_levels(locations)
  if (!length(levels)) return(rep(NA_character_, length(hosts)))
  locations[[levels[length(levels)]]][match(hosts, locations$host)]
}

# One row per outlier: run, kernel, scope (a level above the node, node or
# core), location (the unit of such a level, or the finest unit a node or
# core sits in), host, cpu (NA for a node), ranks, noise_percent (mean over
# its ranks), typical_percent, others_median_percent, others_mad_percent,
# robust_z, stolen_percent, slowdown_percent, cause (the class that took most,
# where traced) and why. yardsticks: stretch_yardsticks(run) per run, by
# name; causes: cause_shares(runs); locations: node_locations' table.
outlier_table <- function(runs, summary, yardsticks, causes, locations = NULL) {
  locations <- locations %||% data.table(host = character())
  rows <- rbindlist(lapply(names(runs), function(name) {
    s <- summary[run == name]
    y <- yardsticks[[name]]
    units <- level_standing(y, locations)
    covered <- unlist(units$hosts)
    nodes <- node_standing(y)[outlier == TRUE & !host %in% covered]
    # a core of a bad node, chassis or cabinet is that unit's story
    cores <- y$cores[!host %in% c(nodes$host, covered)]
    unit_rows <- rbindlist(lapply(seq_len(nrow(units)), function(i) {
      u <- units[i]
      s[host %in% u$hosts[[1]], .(scope = u$scope, location = u$member, ranks = .N,
        noise_percent = mean(noise_percent), stolen_percent = mean(stolen_percent),
        slowdown_percent = mean(slowdown_percent), units = list(as.numeric(thread)),
        typical_percent = u$typical_percent, centre = u$centre, spread = u$spread,
        robust_z = u$robust_z)]
    }))
    node_rows <- s[host %in% nodes$host, .(scope = "node", cpu = NA_integer_, ranks = .N,
      noise_percent = mean(noise_percent), stolen_percent = mean(stolen_percent),
      slowdown_percent = mean(slowdown_percent), units = list(as.numeric(thread))), by = host][nodes,
      on = "host"]
    core_rows <- s[cores, on = .(host, thread = unit), .(scope = "core", host, cpu,
      ranks = 1L, noise_percent, stolen_percent, slowdown_percent,
      units = as.list(as.numeric(thread)),
      typical_percent = i.typical_percent, centre = i.centre, spread = i.spread,
      robust_z = i.robust_z)]
    out <- rbind(unit_rows, node_rows, core_rows, fill = TRUE)
    if (nrow(out) == 0) return(NULL)
    if (!"location" %in% names(out)) out[, location := NA_character_]
    out[is.na(location), location := finest_location(host, locations)]
    traced <- if (nrow(causes)) causes[run == name] else NULL
    top <- rbindlist(lapply(out$units, function(u) top_cause(traced, u)))
    out[, `:=`(cause = top$class, why = outlier_why(stolen_percent, slowdown_percent, top$class,
      top$share), units = NULL, run = name, kernel = runs[[name]]$kernel)]
    scopes <- c(location_levels(locations), "node", "core")
    out[order(match(scope, scopes), -robust_z), .(run, kernel, scope, location, host, cpu,
      ranks, noise_percent, typical_percent, others_median_percent = centre,
      others_mad_percent = spread, robust_z, stolen_percent, slowdown_percent, cause, why)]
  }))
  if (nrow(rows)) return(rows)
  data.table(run = character(), kernel = character(), scope = character(),
    location = character(), host = character(), cpu = integer(), ranks = integer(),
    noise_percent = numeric(), typical_percent = numeric(), others_median_percent = numeric(),
    others_mad_percent = numeric(), robust_z = numeric(), stolen_percent = numeric(),
    slowdown_percent = numeric(), cause = character(), why = character())
}

# Every core of each run at a glance, the headline beside the outliers: how
# many CPUs and hosts, the share of time they lost (median, 99th percentile,
# largest over the CPUs), what the system took of the median CPU by that
# share (median_cpu_at), and beside it the work's slowdown and variation on
# that CPU and their whole (NA where the kernel does not split them; the
# whole is then the median CPU's noise_percent),
# and the tail: the p99.9 loss of a sample (us) of the median and of the
# 99th-percentile CPU, and the longest loss of any.
system_spread <- function(summary, tails) {
  q <- function(x, p) stats::quantile(x, p, names = FALSE, na.rm = TRUE, type = 1)
  split <- c("stolen_percent", "slowdown_percent", "variation_percent", "lost_percent")
  missing <- setdiff(split, names(summary))
  if (length(missing)) summary <- copy(summary)[, (missing) := NA_real_]
  s <- summary[, {
    m <- median_cpu_at(as.numeric(stolen_percent))
    .(cpus = .N, hosts = uniqueN(host), noise_median_percent = median_cpu(noise_percent),
      noise_p99_percent = q(noise_percent, 0.99), noise_max_percent = max(noise_percent),
      stolen_median_percent = as.numeric(stolen_percent)[m],
      # the same CPU's whole, where the kernel splits it: its parts add up
      lost_median_percent = if (is.na(m)) median_cpu(noise_percent) else
        as.numeric(lost_percent)[m],
      slowdown_median_percent = as.numeric(slowdown_percent)[m],
      variation_median_percent = as.numeric(variation_percent)[m],
      stolen_max_percent = suppressWarnings(max(as.numeric(stolen_percent), na.rm = TRUE)))
  }, by = .(run, kernel)]
  s[!is.finite(stolen_max_percent), stolen_max_percent := NA_real_]
  if (is.null(tails) || nrow(tails) == 0) return(s)
  t <- tails[run %in% s$run, .(p99_9_us_median = median_cpu(p99_9_us),
    p99_9_us_p99 = q(p99_9_us, 0.99), max_us = max(max_us)), by = run]
  t[s, on = "run"][, c(names(s), "p99_9_us_median", "p99_9_us_p99", "max_us"), with = FALSE]
}
