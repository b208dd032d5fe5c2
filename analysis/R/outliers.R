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

# How many of each slice sorted[from + 1:len] lie at or below v (below v
# where strict), one query an element of from, len and v: a bisection of
# all the slices at once, which findInterval, checking the whole vector is
# sorted at each call, cannot do at a cost of the slices' length's log.
count_upto <- function(sorted, from, len, v, strict = FALSE) {
  lo <- numeric(length(v))
  hi <- as.numeric(len)
  # as many halvings as the longest slice needs, each on every query: a
  # settled one (lo == hi) looks at its own last element and stays put
  for (step in seq_len(ceiling(log2(max(c(len, 0)) + 1)))) {
    open <- lo < hi
    mid <- floor((lo + hi + 1) / 2)
    x <- sorted[from + pmax(mid, 1)]
    at_most <- if (strict) x < v else x <= v
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
# "the others" is found by bisection instead, counting the group's values
# at or below a value less the member's own. value, group, member: one
# element a value; member names unique across groups. One row per member,
# in order of first appearance: member, group, centre (NA where the group
# has no other member).
others_median <- function(value, group, member) {
  first <- !duplicated(member)
  members <- data.table(member = member[first], group = group[first])
  # the values sorted by group, and by member: each one's slice
  slices <- function(of, names) {
    at <- match(of, names)
    list(sorted = value[order(at, value)], len = tabulate(at, length(names)))
  }
  groups <- slices(group, unique(members$group))
  own <- slices(member, members$member)
  g <- match(members$group, unique(members$group))
  g_from <- (cumsum(groups$len) - groups$len)[g]
  g_len <- groups$len[g]
  own_from <- cumsum(own$len) - own$len
  # how many of the others of members `at` lie at or below v
  others_upto <- function(v, at = seq_along(g), strict = FALSE) {
    count_upto(groups$sorted, g_from[at], g_len[at], v, strict) -
      count_upto(own$sorted, own_from[at], own$len[at], v, strict)
  }
  others <- g_len - own$len
  value_at <- function(i, at = seq_along(g)) groups$sorted[g_from[at] + i]
  # the k-th smallest of each member's others: the group's lowest value
  # with k of the others at or below it
  kth <- function(k) {
    value_at(first_reaching(rep(1, length(g)), g_len,
      function(i, at) others_upto(value_at(i, at), at) >= k[at]))
  }
  middle <- function(of) (of(pmax(1, (others + 1) %/% 2)) + of(others %/% 2 + 1)) / 2
  centre <- middle(kth)
  members[, centre := ifelse(others > 0, centre, NA_real_)][]
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
  typical[, members := .N, by = group]
  bins[, off := abs(noise_percent - typical$typical_percent[match(member, typical$member)])]
  on.exit(bins[, off := NULL])
  big <- typical[members >= yardstick_leave_in]
  if (nrow(big)) {
    yardstick <- big[, .(centre = median(typical_percent)), by = group][
      bins[group %in% big$group, .(spread = median(off)), by = group], on = "group"]
    typical[yardstick, on = "group", `:=`(centre = i.centre, spread = i.spread)]
  }
  # fewer: the others' typical stretches by pairs (at most 31 x 30 a
  # group), their distances by counting
  small <- typical[members > 1 & members < yardstick_leave_in, .(group, member, typical_percent)]
  if (nrow(small)) {
    centres <- small[small, on = "group", allow.cartesian = TRUE, nomatch = NULL][
      member != i.member, .(centre = median(i.typical_percent)), by = member]
    spreads <- bins[group %in% small$group, others_median(off, group, member)]
    typical[centres, on = "member", centre := i.centre]
    typical[spreads, on = "member", spread := i.centre]
  }
  typical[members == 1, `:=`(centre = NA_real_, spread = NA_real_)]
  typical[, spread := 1.4826 * spread]
  typical[, robust_z := ifelse(typical_percent == centre, 0, (typical_percent - centre) / spread)]
  typical[, outlier := !is.na(robust_z) & robust_z > outlier_z]
  typical[, members := NULL][]
}

# Each host of a run against the run's other hosts, and each core against
# the other cores of its node. b: noise_over_time(run, best = "run").
node_standing <- function(b) {
  against_others(b[, .(group = 1L, member = host, noise_percent)])[,
    .(host = member, typical_percent, centre, spread, robust_z, outlier)]
}

# a run's units are its ranks, each on one host: a unit names a member
core_standing <- function(b) {
  units <- unique(b[, .(member = unit, host, unit, cpu)])
  against_others(b[, .(group = host, member = unit, noise_percent)])[
    units, on = "member"][, .(host, unit, cpu, typical_percent, centre, spread, robust_z,
    outlier)]
}

# The class of cause that held most of the detours' time of some units of
# a traced run (cause_shares' rows), and its share (%); NA untraced.
top_cause <- function(causes, units) {
  mine <- if (is.null(causes)) NULL else causes[unit %in% units]
  if (is.null(mine) || sum(mine$total_us) == 0) {
    return(data.table(class = NA_character_, share = NA_real_))
  }
  by_class <- mine[, .(us = sum(total_us)), by = class][order(-us)]
  data.table(class = by_class$class[1], share = 100 * by_class$us[1] / sum(by_class$us))
}

# Why a node or a core lost its time, in words: the kernel's split into
# detours and running slow (means over its ranks) and the class of cause
# that held most of its detours' time, where traced.
outlier_why <- function(detour, slow, cause, cause_share) {
  split <- ifelse(is.na(detour), "detours and running slow not told apart",
    sprintf("detours %.2f%%, running slow %.2f%% of the time", detour, slow))
  ifelse(is.na(cause), split, sprintf("%s; most of the detours' time: %s (%.0f%%)", split,
    cause, cause_share))
}

# The units of each level above the node (node_locations: cabinets, their
# chassis) noisier than the other units of their level, the largest level
# first, each unit held against the others as a node is (its typical
# stretch, the median of all its ranks' stretches); a unit inside one
# already named is that unit's story. One row per outlier: scope (the
# level), location (the unit), the hosts it holds, ranks and its standing.
# b: noise_over_time(run, best = "run").
level_standing <- function(b, locations) {
  covered <- character()
  rows <- list()
  for (level in location_levels(locations)) {
    unit <- locations[[level]][match(b$host, locations$host)]
    keep <- !is.na(unit)
    if (uniqueN(unit[keep]) < 2) next
    flagged <- against_others(data.table(group = 1L, member = unit[keep],
      noise_percent = b$noise_percent[keep]))[outlier == TRUE]
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
# robust_z, detour_percent, slow_percent, cause (the class that took most,
# where traced) and why. bins: noise_over_time(run, best = "run") per run,
# by name; causes: cause_shares(runs); locations: node_locations' table.
outlier_table <- function(runs, summary, bins, causes, locations = NULL) {
  locations <- locations %||% data.table(host = character())
  rows <- rbindlist(lapply(names(runs), function(name) {
    s <- summary[run == name]
    units <- level_standing(bins[[name]], locations)
    covered <- unlist(units$hosts)
    nodes <- node_standing(bins[[name]])[outlier == TRUE & !host %in% covered]
    # a core of a bad node, chassis or cabinet is that unit's story
    cores <- core_standing(bins[[name]])[outlier == TRUE & !host %in% c(nodes$host, covered)]
    unit_rows <- rbindlist(lapply(seq_len(nrow(units)), function(i) {
      u <- units[i]
      s[host %in% u$hosts[[1]], .(scope = u$scope, location = u$member, ranks = .N,
        noise_percent = mean(noise_percent), detour_percent = mean(detour_percent),
        slow_percent = mean(slow_percent), units = list(as.numeric(thread)),
        typical_percent = u$typical_percent, centre = u$centre, spread = u$spread,
        robust_z = u$robust_z)]
    }))
    node_rows <- s[host %in% nodes$host, .(scope = "node", cpu = NA_integer_, ranks = .N,
      noise_percent = mean(noise_percent), detour_percent = mean(detour_percent),
      slow_percent = mean(slow_percent), units = list(as.numeric(thread))), by = host][nodes,
      on = "host"]
    core_rows <- s[cores, on = .(host, thread = unit), .(scope = "core", host, cpu,
      ranks = 1L, noise_percent, detour_percent, slow_percent,
      units = as.list(as.numeric(thread)),
      typical_percent = i.typical_percent, centre = i.centre, spread = i.spread,
      robust_z = i.robust_z)]
    out <- rbind(unit_rows, node_rows, core_rows, fill = TRUE)
    if (nrow(out) == 0) return(NULL)
    if (!"location" %in% names(out)) out[, location := NA_character_]
    out[is.na(location), location := finest_location(host, locations)]
    traced <- if (nrow(causes)) causes[run == name] else NULL
    top <- rbindlist(lapply(out$units, function(u) top_cause(traced, u)))
    out[, `:=`(cause = top$class, why = outlier_why(detour_percent, slow_percent, top$class,
      top$share), units = NULL, run = name, kernel = runs[[name]]$kernel)]
    scopes <- c(location_levels(locations), "node", "core")
    out[order(match(scope, scopes), -robust_z), .(run, kernel, scope, location, host, cpu,
      ranks, noise_percent, typical_percent, others_median_percent = centre,
      others_mad_percent = spread, robust_z, detour_percent, slow_percent, cause, why)]
  }))
  if (nrow(rows)) return(rows)
  data.table(run = character(), kernel = character(), scope = character(),
    location = character(), host = character(), cpu = integer(), ranks = integer(),
    noise_percent = numeric(), typical_percent = numeric(), others_median_percent = numeric(),
    others_mad_percent = numeric(), robust_z = numeric(), detour_percent = numeric(),
    slow_percent = numeric(), cause = character(), why = character())
}

# Every core of each run at a glance, the headline beside the outliers: how
# many CPUs and hosts, the share of time they lost (median, 99th percentile,
# largest over the CPUs), its parts in detours and in running slow (median
# over the CPUs; NA where the kernel does not split them), and the tail:
# the p99.9 loss of a sample (us) of the median and of the 99th-percentile
# CPU, and the longest loss of any.
system_spread <- function(summary, tails) {
  q <- function(x, p) stats::quantile(x, p, names = FALSE, na.rm = TRUE, type = 1)
  s <- summary[, .(cpus = .N, hosts = uniqueN(host), noise_median_percent = q(noise_percent, 0.5),
    noise_p99_percent = q(noise_percent, 0.99), noise_max_percent = max(noise_percent),
    detour_median_percent = stats::median(as.numeric(detour_percent)),
    slow_median_percent = stats::median(as.numeric(slow_percent))), by = .(run, kernel)]
  if (is.null(tails) || nrow(tails) == 0) return(s)
  t <- tails[run %in% s$run, .(p99_9_us_median = q(p99_9_us, 0.5),
    p99_9_us_p99 = q(p99_9_us, 0.99), max_us = max(max_us)), by = run]
  t[s, on = "run"][, c(names(s), "p99_9_us_median", "p99_9_us_p99", "max_us"), with = FALSE]
}
