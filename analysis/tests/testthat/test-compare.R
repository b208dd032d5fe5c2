# report.R --compare on synthetic runs whose difference is known.

# FWQ samples of 10 us with a 50 us detour in every `every`-th, at random.
fwq_ticks <- function(n, every) {
  x <- rep(10000, n)
  x[sample.int(n, n %/% every)] <- 60000
  x
}

test_that("a known difference is found, its interval covering it; none is not", {
  set.seed(3)
  a <- withr_tempdir()
  b <- withr_tempdir()
  for (r in 1:3) {
    write_fwq(a, paste0("fwq", r), list(fwq_ticks(20000, 100)))
    write_fwq(b, paste0("fwq", r), list(fwq_ticks(20000, 20)))
  }
  rows <- compare_table(read_results(a)$runs, read_results(b)$runs)
  lost <- rows[figure == "lost_percent"]
  # lost: 50 us in 1 of `every` samples of 10 us
  share <- function(every) 100 * 50 / (every * 10 + 50)
  expect_equal(lost$a, share(100), tolerance = 1e-9)
  expect_equal(lost$b, share(20), tolerance = 1e-9)
  expect_true(lost$significant)
  expect_true(lost$ci_low < share(20) - share(100) && share(20) - share(100) < lost$ci_high)
  expect_equal(rows[figure == "max_us", difference], 0)
  expect_equal(lost$runs_a, 3)

  same <- compare_table(read_results(a)$runs, read_results(a)$runs)
  expect_false(any(same$significant))
})

test_that("percentiles in one bin of the grid are not a difference, whatever their last digits", {
  # losses of whole steps (as FTQ's are whole counts): both sides' p99 and
  # p99.9 are one step, B's p99.9 two in some replicates; B's clock a hair
  # faster or slower makes its steps a hair shorter or longer than A's
  set.seed(5)
  steps <- function(two) {
    u <- stats::runif(50000)
    10000 + 1000 * ((u < 0.05) + (u < two))
  }
  for (hair in c(1e-9, -1e-9)) {
    a <- withr_tempdir()
    b <- withr_tempdir()
    for (r in 1:3) {
      write_fwq(a, paste0("fwq", r), list(steps(3e-4)))
      write_fwq(b, paste0("fwq", r), list(steps(9.8e-4)), tpn = 1 + hair)
    }
    rows <- compare_table(read_results(a)$runs, read_results(b)$runs)[figure %like% "^p99"]
    expect_equal(rows$a, c(1, 1))
    expect_true(all(rows$difference != 0))
    expect_true(all(rows$ci_low <= rows$difference & rows$difference <= rows$ci_high))
    expect_false(any(rows$significant))
  }
})

test_that("runs pair by what they measured, an injected run with the quiet one", {
  a <- withr_tempdir()
  b <- withr_tempdir()
  write_fwq(a, "fwq", list(rep(1000, 100)))
  write_ftq(a, "ftq", list(rep(1000, 100)), 10000)
  write_ftq(b, "ftq", list(c(rep(1000, 99), 500)), 10000,
    inject = list(period_us = 1000, duration_us = 50))
  rows <- compare_table(read_results(a)$runs, read_results(b)$runs)
  expect_equal(unique(rows$kernel), "ftq")
  expect_match(unique(rows$what), "B injected 50 us every 1000 us")
  # a random stream is named as one, and pairs apart from a periodic one
  write_ftq(a, "ftq2", list(c(rep(1000, 99), 500)), 10000,
    inject = list(period_us = 1000, duration_us = 50, pattern = "poisson"))
  labels <- run_labels(read_results(a)$runs)
  expect_equal(sort(unique(labels$inject)), c("", "50 us every 1000 us on average (Poisson)"))
  expect_equal(format_inject(list(period_us = 1000, duration_us = 50, pattern = "poisson")),
    "1000:50:poisson")
})

test_that("the comparison page marks what differs in the manifests", {
  a <- withr_tempdir()
  b <- withr_tempdir()
  write_fwq(a, "fwq", list(rep(1000, 100)))
  write_fwq(b, "fwq", list(rep(1000, 100)))
  json <- file.path(b, "fwq.json")
  meta <- jsonlite::fromJSON(json, simplifyVector = FALSE)
  meta$machine$kernel_cmdline <- "quiet isolcpus=1 nohz_full=1"
  meta$machine$isolcpus <- "1"
  writeLines(jsonlite::toJSON(meta, auto_unbox = TRUE, null = "null", digits = NA), json)
  page <- write_comparison(a, b)
  expect_equal(page, file.path(b, paste0("report-vs-", basename(normalizePath(a))),
    "index.html"))
  manifest <- fread(file.path(dirname(page), "manifests.csv"))
  expect_setequal(manifest[differs == TRUE, item], c("kernel command line", "isolcpus"))
  expect_equal(manifest$item[1], "kernel command line")
  # the report of B does not read the comparison as runs
  expect_length(read_results(b)$runs, 1)
})

test_that("directories with nothing in common stop with one line", {
  a <- withr_tempdir()
  b <- withr_tempdir()
  write_fwq(a, "fwq", list(rep(1000, 100)))
  write_ftq(b, "ftq", list(rep(1000, 100)), 10000)
  expect_error(write_comparison(a, b), "no run of one measured what a run of the other did")
  expect_false(dir.exists(file.path(b, paste0("report-vs-", basename(normalizePath(a))))))
})

test_that("the percentiles from the grid's bins are the measured ones", {
  set.seed(2)
  us <- c(rep(0, 1000), stats::rexp(20000, 1 / 30), stats::runif(300, 100, 5000))
  side <- list(ranks = list(list(us = us[1:10000], ends = c(5000, 10000), seconds = 1),
    list(us = us[-(1:10000)], ends = c(6000, length(us) - 10000), seconds = 1)),
    run_sizes = 4)
  b <- block_table(side, loss_grid(max(us)))
  probs <- c(0.5, 0.99, 0.999, 1)
  expect_equal(binned_quantiles(side, b$bins, colSums(b$hist), probs),
    measured_quantiles(us, probs))
  expect_equal(colSums(b$hist)[[1]], sum(us <= 1e-3)) # no loss, or under 1 ns: the first bin
  expect_equal(sum(b$lost), sum(us))
})

test_that("a comparison from the reader's tables of values is the one from the samples", {
  a <- withr_tempdir()
  b <- withr_tempdir()
  set.seed(4)
  write_fwq(a, "fwq", lapply(1:2, function(i) round(10000 + stats::rexp(20000, 1 / 3000))))
  write_fwq(b, "fwq", lapply(1:2, function(i) round(10000 + stats::rexp(20000, 1 / 4000))))
  runs_a <- read_results(a)$runs
  runs_b <- read_results(b)$runs
  expect_false(is.null(runs_a$fwq$threads[[1]]$table))
  from_tables <- compare_table(runs_a, runs_b)
  for (i in 1:2) runs_a$fwq$threads[[i]]$table <- runs_b$fwq$threads[[i]]$table <- NULL
  expect_equal(from_tables, compare_table(runs_a, runs_b))
})

test_that("the headline is compared first, its interval from the ranks' own and the runs' spread", {
  # two ranks a run: A's system took 1% (interval +-0.2), B's 3% (+-0.4)
  entry <- function(stolen, half) {
    list(stolen_percent = stolen, stolen_ci95_low = stolen - half, stolen_ci95_high = stolen + half)
  }
  a <- withr_tempdir()
  b <- withr_tempdir()
  for (r in 1:2) {
    write_fwq(a, paste0("fwq", r), list(rep(1000, 100), rep(1000, 100)),
      fields = list(entry(1, 0.2), entry(1, 0.2)))
    write_fwq(b, paste0("fwq", r), list(rep(1000, 100), rep(1000, 100)),
      fields = list(entry(3 + (r - 1.5) * 2, 0.4), entry(3 + (r - 1.5) * 2, 0.4)))
  }
  rows <- compare_table(read_results(a)$runs, read_results(b)$runs)
  h <- rows[figure == "stolen_percent"]
  expect_equal(nrow(h), 1)
  expect_equal(rows$figure[1], "stolen_percent")
  expect_equal(c(h$a, h$b, h$difference), c(1, 3, 2))
  z <- stats::qnorm(0.975)
  se_a <- sqrt(4 * (0.2 / z)^2) / 4
  # B's runs (2 and 4) spread more than its ranks' intervals say: that spread counts
  se_b <- stats::sd(c(2, 4)) / sqrt(2)
  expect_equal(h$ci_high - h$difference, z * sqrt(se_a^2 + se_b^2), tolerance = 1e-9)
  expect_true(h$significant)
  expect_match(compare_headlines(rows), "the system took 1% of each CPU on A and 3% on B; B - A is 2 points")

  # runs without the headline (older kernels) get no such row
  old <- withr_tempdir()
  write_fwq(old, "fwq", list(rep(1000, 100)))
  expect_false("stolen_percent" %in% compare_table(read_results(old)$runs,
    read_results(old)$runs)$figure)
})
