# A run's stretches reduced a batch of hosts at a time (stretch_yardsticks,
# heatmap_tiles) say what the whole run's stretches say at once.

# hosts x cpus FWQ ranks, each losing its own share of the time
stretch_run <- function(hosts, cpus, n = 600) {
  dir <- withr_tempdir()
  ranks <- hosts * cpus
  share <- 0.01 + 0.3 * ((seq_len(ranks) * 7919) %% 101) / 100
  write_fwq(dir, "fwq", lapply(seq_len(ranks), function(i) fwq_ticks(n, share[i], i)),
    hosts = sprintf("n%02d", rep(seq_len(hosts), each = cpus)), cpus = rep(seq_len(cpus) - 1,
    hosts))
  read_run(file.path(dir, "fwq.json"))
}

# The heat map of every stretch at once, as a figure of a few CPUs draws it:
# a row a CPU in the order of its share of time lost (noise), then banded.
whole_heatmap <- function(run, noise) {
  s <- noise_over_time(run)
  units <- thread_values(run, "unit", 0L)
  o <- order(noise)
  at <- match(s$unit, units)
  row <- structure(order(o)[at], levels = unit_label(units, thread_values(run, "cpu", 0L),
    thread_values(run, "host", ""))[o], class = "factor")
  tile_bands(data.table(x = s$time_s, row = row, noise_percent = s$noise_percent))
}

test_that("the heat map's tiles a batch of hosts at a time are the whole run's", {
  for (shape in list(c(3, 4), c(6, 50))) {
    run <- stretch_run(shape[1], shape[2])
    noise <- noise_summary(run, "fwq")$noise_percent
    want <- whole_heatmap(run, noise)
    got <- stretch_yardsticks(run, noise, batch_ranks = 1)$tiles
    setorder(want, row, x)
    setorder(got, row, x)
    expect_equal(levels(got$row), levels(want$row))
    expect_equal(as.integer(got$row), as.integer(want$row))
    expect_equal(got$x, want$x)
    expect_equal(got$noise_percent, want$noise_percent, tolerance = 1e-12)
  }
  # 300 CPUs: 192 bands and the 64 noisiest a row each
  expect_equal(nlevels(got$row), tile_rows_max)
  expect_equal(utils::tail(levels(got$row), 1), with(noise_summary(run, "fwq"),
    unit_label(thread, cpu, host)[which.max(noise)]))
})

test_that("the yardsticks by batches of hosts are those of all the stretches at once", {
  run <- stretch_run(6, 5)
  b <- noise_over_time(run, best = "run")
  whole <- list(
    nodes = against_others(b[, .(group = 1L, member = host, noise_percent)]),
    cores = core_standing(b)[outlier == TRUE])
  for (batch in c(1, 10^4)) {
    y <- stretch_yardsticks(run, batch_ranks = batch)
    nodes <- node_standing(y)
    expect_equal(nodes$host, whole$nodes$member)
    expect_equal(nodes[, .(typical_percent, centre, spread, robust_z)],
      whole$nodes[, .(typical_percent, centre, spread, robust_z)], tolerance = 1e-12)
    expect_equal(y$cores, whole$cores)
    # each host's stretches (of its 5 CPUs' 100, those any sample ended in)
    # whole in its sketch
    expect_equal(y$values[, .N, by = host]$N, b[, .N, by = host]$N)
    expect_true(all(y$values$weight == 1))
  }
})

test_that("a host of more stretches than its sketch holds is held to within its spread", {
  # 40 hosts of 8 CPUs: over 700 stretches a host, 512 in its sketch
  run <- stretch_run(40, 8, n = 400)
  b <- noise_over_time(run, best = "run")
  whole <- against_others(b[, .(group = 1L, member = host, noise_percent)])
  y <- stretch_yardsticks(run)
  expect_equal(y$values[, .N, by = host]$N, rep(stretch_sketch_max, 40))
  expect_equal(y$values[, sum(weight), by = host]$V1, b[, .N, by = host]$N)
  nodes <- node_standing(y)
  expect_equal(nodes$typical_percent, whole$typical_percent, tolerance = 1e-12)
  # the spread, a median of 32,000 distances, from 40 sketches of 512
  expect_equal(nodes$spread, whole$spread, tolerance = 0.01)
})

test_that("a sketch keeps a host's values whole, or the middle of equal runs of them", {
  s <- sketch_sorted(sorted_by(rep(1L, 5), c(5, 1, 3, 2, 4)), "a")
  expect_equal(s$value, 1:5)
  expect_equal(s$weight, rep(1, 5))
  many <- sketch_sorted(sorted_by(rep(1L, 2048), as.numeric(1:2048)), "b")
  expect_equal(nrow(many), stretch_sketch_max)
  expect_equal(many$weight, rep(4, stretch_sketch_max))
  expect_equal(many$value[1:3], c(2, 6, 10))
  expect_equal(weighted_median(many$value, many$weight, many$host)$centre, 1024, tolerance = 0.01)
})
