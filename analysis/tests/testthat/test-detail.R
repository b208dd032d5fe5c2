test_that("a few units are all shown; of many, the noisiest and the quietest", {
  expect_equal(detail_positions(c(3, 1, 2)), 1:3)
  noise <- c(5, 1, 9, NA, 0.5, 7, 8, 2, 3, 6, 4)
  shown <- detail_positions(noise, k = 4)
  # the three noisiest (9, 8, 7) and the quietest (0.5), in their own order
  expect_equal(shown, c(3, 5, 6, 7))
  expect_equal(detail_positions(rep(NA_real_, 10), k = 3), c(1, 2, 3))
  # ties: the quietest is another unit than the noisiest shown
  expect_length(detail_positions(rep(1, 10), k = 3), 3)
})

# Runs of 64 units each (FWQ and FTQ over two hosts), one unit of FWQ,
# P-SNAP and selfish made far noisier than the rest: a report of a node
# bigger than a figure can hold a panel per CPU of.
many_units <- function(env = parent.frame()) {
  dir <- withr_tempdir(env)
  set.seed(7)
  n <- 64
  hosts <- rep(c("a", "b"), each = n / 2)
  cpus <- rep(seq_len(n / 2) - 1, 2)
  ticks <- lapply(seq_len(n), function(r) {
    x <- rep(1000, 2000) + stats::rpois(2000, 1)
    every <- if (r == 41) 5 else 200
    x[seq(1, 2000, by = every)] <- 3000
    x
  })
  write_fwq(dir, "fwq", ticks, hosts = hosts, cpus = cpus)
  write_ftq(dir, "ftq", lapply(seq_len(n), function(r) impulse_counts(4000, 20)), 10000,
    hosts = hosts, cpus = cpus)
  write_psnap(dir, "psnap", lapply(seq_len(n), function(r) {
    rep(1e6, 300) + stats::rexp(300, if (r == 12) 1e-5 else 1e-3)
  }))
  write_selfish(dir, "selfish", lapply(seq_len(n), function(r) {
    data.table(start_ns = 1e6 * seq_len(20), length_ns = if (r == 30) 90000 else 5000)
  }), period_s = 0.1)
  dir
}

test_that("a run of 64 CPUs gets every figure, a ranking, and panels for the few worst", {
  dir <- many_units()
  page <- write_report(dir, pdf = FALSE)
  out <- file.path(dir, "report")
  pngs <- list.files(out, "\\.png$")
  for (run in c("fwq", "ftq", "psnap", "selfish")) {
    expect_true(paste0(run, "-ranking.png") %in% pngs, label = run)
    expect_true(paste0(run, "-heatmap.png") %in% pngs, label = run)
  }
  # FWQ and FTQ ran over two nodes: a row each in the map of every core
  expect_true(all(c("fwq-core-map.png", "ftq-core-map.png") %in% pngs))
  expect_false("psnap-core-map.png" %in% pngs)
  # a figure of panels holds detail_units_max, not 64: its height says so
  # a PNG's height in pixels, from its header (IHDR: width, then height)
  size <- function(f) {
    b <- as.integer(readBin(file.path(out, f), "raw", 24))
    c(sum(b[21:24] * 256^(3:0)), sum(b[17:20] * 256^(3:0)))
  }
  panels_px <- function(panels) (1.5 + 1.6 * panels) * 100
  expect_equal(size("spectra.png")[1], panels_px(detail_units_max))
  expect_equal(size("fwq-heatmap.png")[1], heatmap_height(64) * 100)
  # the caption says which units the panels show; the noisiest is the one
  # planted (FWQ's rank 41: host b, CPU 8)
  html <- paste(readLines(page), collapse = "\n")
  expect_match(html, "of a run of more than 8 CPUs, the 7 noisiest and the quietest", fixed = TRUE)
  summary <- fread(file.path(out, "summary.csv"))
  expect_equal(nrow(summary[run == "fwq"]), 64)
  worst <- summary[run == "fwq"][which.max(noise_percent)]
  expect_equal(c(worst$host, worst$cpu), c("b", "8"))
  # the page opens on the verdict beside the system's picture (at 64 CPUs,
  # the core map of the run it speaks of), then what removes the noise and
  # the whole system: the outliers, the planted units and no other
  sections <- regmatches(html, gregexpr("<h2>[^<]*</h2>", html))[[1]]
  expect_equal(sections[1:3], c("<h2>Verdict</h2>", "<h2>What removes it</h2>",
    "<h2>Whole system</h2>"))
  expect_match(regmatches(html, regexpr('<img src="[^"]*"', html)), "system-1\\.png")
  expect_true(all(c("system-1.png", "fwq-core-map.png") %in% pngs))
  outliers <- fread(file.path(out, "outliers.csv"))
  expect_equal(outliers[, paste(run, scope, host, cpu)], c("fwq core b 8", "psnap core synth 11",
    "selfish core synth 29"))
  # the page's per-CPU tables hold the units shown in detail; the CSVs all
  # the page's per-CPU tables hold every CPU (searchable); beyond
  # page_rows_max, the units shown in detail
  expect_equal(lengths(regmatches(html, gregexpr("<td>FWQ multiiter, 64 CPUs", html))) > 64, TRUE)
})

test_that("the core map parts the NUMA domains and the SMT siblings where the CPUs change", {
  # 2 nodes x 8 CPUs: NUMA 0 holds CPUs 0-1 and 4-5, NUMA 1 CPUs 2-3 and 6-7;
  # CPUs 4-7 are the second hardware threads of cores 0-3
  noise <- data.table(host = rep(c("a", "b"), each = 8), cpu = rep(0:7, 2),
    numa_node = rep(c(0, 0, 1, 1, 0, 0, 1, 1), 2), smt_thread = rep(rep(0:1, each = 4), 2),
    noise_percent = stats::runif(16))
  edges <- cpu_layout_edges(noise)
  expect_equal(edges[edge == "NUMA domain"]$x, c(1.5, 3.5, 5.5))
  expect_equal(edges[edge == "SMT sibling"]$x, 3.5)
  # a run that does not say where its CPUs sit draws no line
  noise[, `:=`(numa_node = NA_real_, smt_thread = NA_real_)]
  expect_equal(nrow(cpu_layout_edges(noise)), 0)
  expect_s3_class(plot_core_map(noise, "t"), "ggplot")
})

test_that("a tiled figure of more rows than a picture holds keeps the noisiest, bands the rest", {
  # 1000 rows, row i losing i / 10 % more than row i - 1: the levels' order
  # is the noise's, the noisiest last (on top)
  n <- 1000
  d <- data.table(x = rep(1:3, n), row = rep(seq_len(n), each = 3))
  d[, noise_percent := row / 10 + x]
  d[, row := factor(row, levels = seq_len(n))]
  b <- tile_bands(d)
  expect_equal(nlevels(b$row), tile_rows_max)
  expect_equal(nrow(b), 3 * tile_rows_max)
  single <- n - tile_rows_single + seq_len(tile_rows_single)
  expect_equal(tail(levels(b$row), tile_rows_single), as.character(single))
  expect_equal(b[row == as.character(n)]$noise_percent, n / 10 + 1:3)
  # 936 rows in 192 bands: 4.875 a band, the first the rows 1 to 4
  expect_equal(b[row == "band 1"]$noise_percent, mean(1:4) / 10 + 1:3)
  bands <- b[x == 1 & startsWith(as.character(row), "band")]
  expect_equal(nrow(bands), tile_rows_max - tile_rows_single)
  expect_false(is.unsorted(bands[order(row)]$noise_percent))
  # the band of rows up to 936 holds its last rows, and none of the single ones
  expect_lt(max(bands$noise_percent), min(b[x == 1 & !startsWith(as.character(row),
    "band")]$noise_percent))
  small <- droplevels(d[as.integer(row) <= tile_rows_max])
  expect_identical(tile_bands(small), small)
})

test_that("the ranking of many CPUs keeps the noisiest one a point, the rest in runs", {
  n <- 10^5
  noise <- data.table(noise_percent = c(50, 40, 30, stats::runif(n - 3, 1, 10)),
    stolen_percent = 1, slowdown_percent = 2)
  d <- noise[order(-noise_percent)][, position := seq_len(.N)]
  points <- ranking_points(d)
  expect_equal(nrow(points), ranking_points_max)
  # the three bad CPUs, and every one up to ranking_points_single, as they are
  expect_equal(points$noise_percent[1:3], c(50, 40, 30))
  expect_equal(points$position[seq_len(ranking_points_single)], seq_len(ranking_points_single))
  # each run drawn at its first CPU with its largest loss: the curve's own values
  expect_equal(points$noise_percent, d$noise_percent[points$position])
  expect_true(all(diff(points$position) > 0))
  expect_equal(points$stolen_percent, rep(1, ranking_points_max))
  expect_equal(nrow(ranking_points(d[1:100])), 100)
  expect_s3_class(plot_unit_ranking(noise, "t"), "ggplot")
})
