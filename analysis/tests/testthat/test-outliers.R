# The whole system's outliers: planted bad nodes and bad cores are listed,
# each once and with why, and nothing else.

# hosts x cores FWQ ranks losing 2% of their time, but for the planted ones
# (as the kernel would split it: all stolen)
survey_ticks <- function(hosts, cores, bad_nodes, bad_cores, n = 4000) {
  grid <- CJ(h = seq_len(hosts), c = seq_len(cores) - 1)
  share <- ifelse(grid$h %in% bad_nodes | paste(grid$h, grid$c) %in% bad_cores, 0.3, 0.02)
  list(ticks = lapply(seq_len(nrow(grid)), function(i) fwq_ticks(n, share[i], i)),
    hosts = sprintf("node%d", grid$h), cpus = grid$c,
    fields = lapply(share, function(x) list(stolen_percent = 100 * x, slowdown_percent = 0)))
}

outliers_of <- function(s) {
  dir <- withr_tempdir()
  write_fwq(dir, "fwq", s$ticks, hosts = s$hosts, cpus = s$cpus, fields = s$fields)
  runs <- read_results(dir)$runs
  summary <- noise_summary(runs$fwq, "fwq")
  outlier_table(runs, summary, lapply(runs, stretch_yardsticks), cause_shares(runs))
}

test_that("a bad node is one line and a bad core of a good node another, nothing else", {
  # 4 cores a node: each core is held against the other 3 (left out)
  o <- outliers_of(survey_ticks(4, 4, bad_nodes = 3, bad_cores = "1 2"))
  expect_equal(o$scope, c("node", "core"))
  expect_equal(o$host, c("node3", "node1"))
  expect_equal(o$cpu, c(NA, 2))
  expect_equal(o$ranks, c(4L, 1L))
  expect_true(all(o$robust_z > outlier_z))
  expect_equal(o$noise_percent, c(30, 30), tolerance = 0.05)
  # the kernel's split, as it reported it
  expect_equal(o$why, rep("stolen 30% of the time; the work's slowdown 0%", 2))
  expect_true(all(is.na(o$cause)))
})

test_that("two bad nodes of nine, and two bad cores of nodes of ten, stand out", {
  o <- outliers_of(survey_ticks(9, 10, bad_nodes = c(2, 7), bad_cores = c("5 0", "9 9")))
  expect_equal(sort(o[scope == "node"]$host), c("node2", "node7"))
  expect_equal(sort(o[scope == "core", paste(host, cpu)]), c("node5 0", "node9 9"))
})

test_that("each member's yardstick: its others' typical stretches and distances from them", {
  set.seed(3)
  # groups of 1 to 9 members of 7 values each, and one of 40 (its members
  # kept in their own yardstick), with ties within and across members;
  # member names unique across groups, as hosts and units are
  rows <- data.table(group = rep(1:6, c(1, 2, 3, 8, 9, 40) * 7))
  rows[, member := paste(group, (seq_len(.N) - 1) %/% 7), by = group]
  rows[, noise_percent := round(rexp(.N, 1 / 5), 1)]
  rows[, off := abs(noise_percent - stats::median(noise_percent)), by = member]
  got <- against_others(copy(rows)[, off := NULL])
  want <- unique(rows[, .(member, group)])[, {
    peers <- rows[group == .BY$group]
    others <- if (uniqueN(peers$member) >= yardstick_leave_in) peers else
      peers[member != .BY$member]
    if (nrow(others)) list(centre = stats::median(others[, stats::median(noise_percent),
      by = member]$V1), spread = stats::mad(others$off, center = 0))
    else list(centre = NA_real_, spread = NA_real_)
  }, by = .(member, group)]
  expect_equal(got$member, want$member)
  expect_equal(got$centre, want$centre, tolerance = 1e-12)
  expect_equal(got$spread, want$spread, tolerance = 1e-12)
  expect_equal(sum(is.na(got$centre)), 1)
  # the others' median by counting, as copied out
  median_of_others <- unique(rows[, .(member, group)])[, {
    others <- rows[group == .BY$group & member != .BY$member]$noise_percent
    list(centre = if (length(others)) stats::median(others) else NA_real_)
  }, by = .(member, group)]
  expect_equal(others_median(rows$noise_percent, rows$group, rows$member), median_of_others,
    tolerance = 1e-12)
})

test_that("two bad nodes of eight, each far beyond the others' spread, both stand out", {
  # the stretches of a survey drawn from this machine's FWQ (quantiles as
  # measured: a slow tail holding a third of them), a fifth of the time more
  # on two nodes: pooled about one median, the other bad node's stretches,
  # an eighth of each one's yardstick, widen its MAD so that neither stands
  # out (z 3.3)
  set.seed(3)
  rows <- data.table(group = 1L, member = rep(sprintf("n%d", 1:8), each = 400))
  rows[, noise_percent := stats::approx(c(0, 0.05, 0.25, 0.5, 0.6, 0.7, 0.8, 0.9, 1),
    c(4, 4.6, 5.3, 7, 9, 17, 30, 43, 46), runif(.N))$y]
  rows[member %in% c("n3", "n6"), noise_percent := noise_percent + 25 * (1 - noise_percent / 100)]
  got <- against_others(rows)
  expect_equal(got[outlier == TRUE]$member, c("n3", "n6"))
})

test_that("a quiet survey has no outliers, and the table keeps its columns", {
  o <- outliers_of(survey_ticks(3, 2, bad_nodes = integer(), bad_cores = character()))
  expect_equal(nrow(o), 0)
  expect_true(all(c("scope", "host", "cpu", "robust_z", "why") %in% names(o)))
})

test_that("the spread of every CPU's noise is one row a run, whatever the column types", {
  # whole numbers read from JSON are integers; the median CPU is one CPU,
  # the lower middle one of an even count, its parts adding up to its whole
  summary <- data.table(run = c("a", "a", "a", "b", "b"), kernel = "psnap",
    host = c("h1", "h1", "h2", "h1", "h1"), noise_percent = c(1, 2, 30, 4, 5),
    stolen_percent = c(1L, 2L, 3L, 5L, 7L), slowdown_percent = c(0L, 0L, 0L, 1L, 2L),
    variation_percent = c(0, 0, 27, 0, 0))
  summary[, lost_percent := stolen_percent + slowdown_percent + variation_percent]
  s <- system_spread(summary, NULL)
  expect_equal(s$cpus, c(3L, 2L))
  expect_equal(s$hosts, c(2L, 1L))
  expect_equal(s$noise_max_percent, c(30, 5))
  expect_equal(s$noise_median_percent, c(2, 4))
  expect_equal(s$stolen_median_percent, c(2, 5))
  expect_equal(s$slowdown_median_percent, c(0, 1))
  # the median CPU's parts add up to its whole
  expect_equal(s$lost_median_percent, s$stolen_median_percent + s$slowdown_median_percent +
    s$variation_median_percent)
  expect_equal(s$stolen_max_percent, c(3, 7))
  # without the split (FTQ, older runs) its columns are NA
  s <- system_spread(summary[, .(run, kernel, host, noise_percent)], NULL)
  expect_true(all(is.na(s$stolen_median_percent)) && all(is.na(s$stolen_max_percent)))
})
