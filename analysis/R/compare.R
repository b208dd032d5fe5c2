# Two results directories side by side (two systems, or before and after a
# tuning): the runs that measured the same thing (kernel, work kind, sampling
# frequency or granularity, CPU count, injection) are paired, and each figure
# of A and B is given with B - A and a 95% confidence interval of it.
#
# The interval is a block bootstrap: each rank's samples are cut into
# compare_blocks stretches of equal time, and stretches are drawn with
# replacement (after the runs, when a side repeated a run). Noise comes in
# bursts, so samples next to each other are not independent; whole stretches
# are closer to it, and the interval then carries the run's variation over
# time, not only between samples.

compare_blocks <- 20
compare_replicates <- 400
compare_probs <- c(p99 = 0.99, p99_9 = 0.999)

# The losses of runs that measured the same thing (us, tails.R's
# sample_losses; FTQ against its robust best), a vector per rank, with the
# number of samples in each of its stretches of equal time and their length
# (s). Several runs (repetitions) pool their stretches, so that the interval
# carries the variation between runs too.
side_losses <- function(runs) {
  parts <- lapply(runs, run_losses)
  list(ranks = unlist(parts, recursive = FALSE, use.names = FALSE),
    run_sizes = vapply(parts, function(p) compare_blocks * length(p), 0))
}

run_losses <- function(run, blocks = compare_blocks) {
  lapply(seq_along(run$threads), function(i) {
    m <- loss_model(run, i, best = "robust")
    n <- length(m$x)
    # samples in each stretch: recorded detours by their start, the others'
    # samples (which tile the run) by their number
    edges <- if (records_detours(kernel_info(run$kernel))) {
      findInterval(seq_len(blocks - 1) / blocks * m$seconds * 1e9,
        run$threads[[i]]$data$start_ns)
    } else {
      floor(seq_len(blocks - 1) / blocks * n)
    }
    # with a table of its values, a rank's losses are found a stretch at a
    # time (a stretch's vectors stay in the cache; the run's would not)
    list(us = if (is.null(m$table)) m$f(m$x), f = m$f, x = m$x, table = m$table,
      ends = c(edges, n), seconds = m$seconds / blocks)
  })
}

# A rank's longest loss (us), 0 without any
rank_max <- function(r) {
  if (is.null(r$table)) max(r$us, 0) else max(r$table$us, 0)
}

# How often each stretch is drawn in one replicate: runs drawn with
# replacement, then within each run drawn its stretches with replacement (a
# two-stage bootstrap: the machine's state moves between runs, which stretches
# of one run cannot tell).
draw_blocks <- function(run_sizes) {
  w <- numeric(sum(run_sizes))
  offsets <- cumsum(c(0, run_sizes))
  n_runs <- length(run_sizes)
  chosen <- if (n_runs > 1) sample.int(n_runs, n_runs, replace = TRUE) else 1
  for (r in chosen) {
    k <- run_sizes[r]
    slots <- offsets[r] + seq_len(k)
    w[slots] <- w[slots] + tabulate(sample.int(k, k, replace = TRUE), k)
  }
  w
}

# Each stretch's losses on a grid of 1% steps (from 1 ns up; losses of less
# fall in the first bin), so that a replicate's distribution is a weighted
# sum of the stretches' histograms: all replicates are one matrix product.
grid_low_us <- 1e-3
grid_step <- 1.01

loss_grid <- function(us) {
  hi <- max(us, grid_low_us * grid_step)
  c(-Inf, grid_low_us * grid_step^seq(0, ceiling(log(hi / grid_low_us) / log(grid_step)) + 1))
}

# bin i holds (grid[i], grid[i + 1]]
grid_bin <- function(us) {
  v <- ceiling(log(us / grid_low_us) / log(grid_step))
  # no loss (log -Inf) and losses under the first edge: the first bin
  v[!(v > 0)] <- 0
  1L + as.integer(v)
}

# Per stretch of every rank (rows): its histogram on the grid, the time its
# samples lost (us), how many lost more than 10 us, and its length (s). A
# rank with a table of its values bins them by value (a look-up), the others
# each loss; the latter's bins are kept for binned_quantiles.
block_table <- function(side, grid) {
  bins <- length(grid) - 1
  per_rank <- lapply(side$ranks, function(r) {
    if (is.null(r$table)) {
      bin <- grid_bin(r$us)
      stretch <- function(i) list(u = r$us[i], bin = bin[i])
    } else {
      lo <- r$table$value[1]
      lookup <- integer(r$table$value[length(r$table$value)] - lo + 1)
      lookup[r$table$value - lo + 1] <- grid_bin(r$table$us)
      bin <- NULL
      stretch <- function(i) {
        x <- r$x[i]
        list(u = r$f(x), bin = lookup[x - (lo - 1)])
      }
    }
    from <- c(0, r$ends[-length(r$ends)]) + 1
    rows <- lapply(seq_along(r$ends), function(b) {
      if (r$ends[b] < from[b]) return(list(hist = integer(bins), lost = 0, above = 0))
      s <- stretch(from[b]:r$ends[b])
      list(hist = tabulate(s$bin, bins), lost = sum(s$u), above = sum(s$u > 10))
    })
    list(hist = do.call(rbind, lapply(rows, `[[`, "hist")),
      lost = vapply(rows, `[[`, 0, "lost"), above = vapply(rows, `[[`, 0, "above"),
      seconds = rep(r$seconds, length(r$ends)), bin = bin)
  })
  list(bins = lapply(per_rank, `[[`, "bin"),
    hist = do.call(rbind, lapply(per_rank, `[[`, "hist")),
    lost = unlist(lapply(per_rank, `[[`, "lost")),
    above = unlist(lapply(per_rank, `[[`, "above")),
    seconds = unlist(lapply(per_rank, `[[`, "seconds")))
}

# Quantile p of each row of cumulative histograms (one row a replicate), at
# the upper edge of the bin it falls in: within 1%.
grid_quantiles <- function(cum, grid, p) {
  total <- cum[, ncol(cum)]
  bin <- max.col(cum >= p * total, ties.method = "first")
  ifelse(total > 0, pmax(grid[bin + 1], 0), NA_real_)
}

# The figures of runs of one kind (the share of the time lost, %; the loss
# percentiles, us; losses above 10 us a second) and R bootstrap replicates of
# them (rows).
bootstrap_runs <- function(side, grid, replicates = compare_replicates) {
  b <- block_table(side, grid)
  figures <- function(w, cum) {
    time <- drop(w %*% b$seconds)
    q <- vapply(compare_probs, function(p) grid_quantiles(cum, grid, p), numeric(nrow(w)))
    if (is.null(dim(q))) q <- matrix(q, nrow = 1)
    cbind(lost_percent = 100 * drop(w %*% b$lost) / 1e6 / time,
      matrix(q, ncol = length(compare_probs), dimnames = list(NULL,
        paste0(names(compare_probs), "_us"))),
      above_10us_per_s = drop(w %*% b$above) / time)
  }
  w <- t(vapply(seq_len(replicates), function(r) draw_blocks(side$run_sizes),
    numeric(length(b$seconds))))
  reps <- figures(w, t(apply(w %*% b$hist, 1, cumsum)))
  # the same figures of the runs as drawn (every stretch once), on the grid
  # like the replicates: the centre of their spread
  once <- matrix(1, 1, length(b$seconds))
  grid_estimate <- figures(once, t(cumsum(drop(once %*% b$hist))))[1, ]
  # the runs' own figures from their samples, not the grid
  histogram <- colSums(b$hist)
  est <- c(lost_percent = 100 * sum(b$lost) / 1e6 / sum(b$seconds),
    setNames(binned_quantiles(side, b$bins, histogram, compare_probs),
      paste0(names(compare_probs), "_us")),
    above_10us_per_s = sum(b$above) / sum(b$seconds))
  top <- max(vapply(side$ranks, rank_max, 0), -Inf)
  list(estimate = est, grid_estimate = grid_estimate, replicates = reps,
    max_us = if (is.finite(top)) top else NA_real_, histogram = histogram,
    widen = small_sample_widening(length(side$run_sizes)))
}

# Measured quantiles (type 1: the ceiling(n p)-th smallest loss) of all the
# ranks' losses, from the samples of the one grid bin each falls in: the bins
# are in order, so the rank within the bin is what the histogram leaves. A
# rank with a table of its values gives them with their counts.
binned_quantiles <- function(side, bins, histogram, probs) {
  n <- sum(histogram)
  if (n == 0) return(rep(NA_real_, length(probs)))
  below <- cumsum(histogram)
  vapply(probs, function(p) {
    k <- max(1, ceiling(p * n))
    j <- which(below >= k)[1]
    inside <- rbindlist(lapply(seq_along(bins), function(i) {
      r <- side$ranks[[i]]
      tab <- r$table
      if (is.null(tab)) {
        us <- r$us[bins[[i]] == j]
        return(list(us = us, freq = rep(1, length(us))))
      }
      here <- grid_bin(tab$us) == j
      list(us = tab$us[here], freq = tab$freq[here])
    }))
    table_kth(inside$us, inside$freq, k - (if (j > 1) below[j - 1] else 0))
  }, numeric(1))
}

# How much wider than the bootstrap's spread an interval over n runs must
# be: resampling n runs spreads their mean by sqrt((n - 1) / n) of what new
# runs would, and a mean of n has Student's t with n - 1 degrees of freedom,
# not the normal, as its sampling distribution (2.57 against 1.96 for 6
# runs). With one run, the stretches are the sample: no widening.
small_sample_widening <- function(n) {
  if (n < 2) return(1)
  sqrt(n / (n - 1)) * stats::qt(0.975, n - 1) / stats::qnorm(0.975)
}

# The headline of runs of one kind, each rank's stolen_percent as its kernel
# computed it (speed.c), and its standard error: the ranks' own 95%
# intervals over blocks of their time, or the spread between repeated runs
# where that is larger (the machine's state moves between runs, which one
# run's blocks cannot tell). NULL where a run predates the headline.
side_stolen <- function(runs) {
  per_run <- lapply(runs, function(run) {
    data.table(stolen = rank_values(run, "stolen_percent"),
      low = rank_values(run, "stolen_ci95_low"), high = rank_values(run, "stolen_ci95_high"))
  })
  ranks <- rbindlist(per_run)
  if (nrow(ranks) == 0 || anyNA(ranks$stolen)) return(NULL)
  # a rank too short for an interval (under 10 blocks) adds no spread of its own
  se <- ifelse(is.na(ranks$low), 0, (ranks$high - ranks$low) / (2 * stats::qnorm(0.975)))
  within <- sqrt(sum(se^2)) / nrow(ranks)
  means <- vapply(per_run, function(r) mean(r$stolen), 0)
  between <- if (length(means) > 1) stats::sd(means) / sqrt(length(means)) else 0
  list(estimate = mean(ranks$stolen), se = max(within, between))
}

# B - A of the headline with its 95% interval (normal: each side's error is
# a sum over many blocks), a row of compare_table; NULL without the headline.
stolen_row <- function(runs_a, runs_b) {
  a <- side_stolen(runs_a)
  b <- side_stolen(runs_b)
  if (is.null(a) || is.null(b)) return(NULL)
  half <- stats::qnorm(0.975) * sqrt(a$se^2 + b$se^2)
  d <- b$estimate - a$estimate
  data.table(figure = "stolen_percent", a = a$estimate, b = b$estimate, difference = d,
    ci_low = d - half, ci_high = d + half)
}

# The replicates' interval (rows: low, high) widened around their own
# centre, the difference on the grid, then stretched to hold the difference
# of the samples too: the two are up to the grid's 1% apart, and a
# difference in the last digits between two percentiles in one bin (FTQ's
# losses are whole counts, each run's count a little longer or shorter) is
# not one the replicates can tell from 0.
widened_interval <- function(ci, centre, exact, widen) {
  rbind(pmin(centre, exact) + (ci[1, ] - centre) * widen,
    pmax(centre, exact) + (ci[2, ] - centre) * widen)
}

# The two-sample Kolmogorov-Smirnov test of two samples' losses from their
# histograms on one grid (D within the grid's 1%), with the asymptotic
# p-value: sorting millions of samples would cost more than the rest.
ks_histograms <- function(ha, hb) {
  na <- sum(ha)
  nb <- sum(hb)
  if (na < 2 || nb < 2) return(list(statistic = NA_real_, p.value = NA_real_))
  d <- max(abs(cumsum(ha) / na - cumsum(hb) / nb))
  n <- na * nb / (na + nb)
  lambda <- (sqrt(n) + 0.12 + 0.11 / sqrt(n)) * d
  k <- seq_len(100)
  p <- if (lambda < 1e-3) 1 else 2 * sum((-1)^(k - 1) * exp(-2 * k^2 * lambda^2))
  list(statistic = d, p.value = min(max(p, 0), 1))
}


# What pairs runs of A and B: what they measured, not where or when; the
# same injection first, then runs left unpaired whatever their injection (a
# system against itself with noise injected).
run_key <- function(labels) {
  labels[, base := paste(kernel, work, sampling_hz, granularity_us, cpus)]
  labels[, key := paste(base, inject)]
}

pair_keys <- function(la, lb) {
  same <- intersect(la$key, lb$key)
  left_a <- la[!key %in% same]
  left_b <- lb[!key %in% same]
  rest <- intersect(left_a$base, left_b$base)
  left_a[base %in% rest, key := base]
  left_b[base %in% rest, key := base]
  list(a = rbind(la[key %in% same], left_a[base %in% rest]),
    b = rbind(lb[key %in% same], left_b[base %in% rest]), keys = c(same, rest))
}

# One row per paired run and figure: A, B, B - A, its 95% interval, and
# whether the interval excludes 0 (significant). A figure that is the same in
# every replicate (no loss at all) gets no interval.
#' @rdname noise_summary
#' @export
compare_table <- function(runs_a, runs_b, seed = 1) {
  pairs <- pair_keys(run_key(run_labels(runs_a)), run_key(run_labels(runs_b)))
  la <- pairs$a
  lb <- pairs$b
  keys <- pairs$keys
  set.seed(seed)
  rbindlist(lapply(keys, function(k) {
    ra <- la[key == k][1]
    rb <- lb[key == k][1]
    side_a <- side_losses(runs_a[la[key == k, run]])
    side_b <- side_losses(runs_b[lb[key == k, run]])
    grid <- loss_grid(vapply(c(side_a$ranks, side_b$ranks), rank_max, 0))
    a <- bootstrap_runs(side_a, grid)
    b <- bootstrap_runs(side_b, grid)
    diff <- b$replicates - a$replicates
    widen <- max(a$widen, b$widen)
    ci <- apply(diff, 2, stats::quantile, c(0.025, 0.975), na.rm = TRUE, names = FALSE)
    ci <- widened_interval(ci, b$grid_estimate - a$grid_estimate,
      b$estimate - a$estimate, widen)
    ks <- ks_histograms(a$histogram, b$histogram)
    what <- sub(" #[0-9]+$", "", sub(paste0(" on ", ra$hosts), "", ra$label, fixed = TRUE))
    if (rb$inject != ra$inject) {
      what <- paste0(what, " (B injected ", if (nzchar(rb$inject)) rb$inject else "nothing", ")")
    }
    headline <- stolen_row(runs_a[la[key == k, run]], runs_b[lb[key == k, run]])
    rows <- rbind(
      if (!is.null(headline)) headline[, `:=`(what = what, kernel = ra$kernel)],
      data.table(what = what, kernel = ra$kernel, figure = names(a$estimate),
        a = a$estimate, b = b$estimate, difference = b$estimate - a$estimate,
        ci_low = ci[1, ], ci_high = ci[2, ]),
      data.table(what = what, kernel = ra$kernel, figure = "max_us", a = a$max_us,
        b = b$max_us, difference = b$max_us - a$max_us, ci_low = NA_real_, ci_high = NA_real_),
      fill = TRUE
    )[, `:=`(
      significant = !is.na(ci_low) & ci_high > ci_low & (ci_low > 0 | ci_high < 0),
      ks_statistic = ks$statistic,
      ks_p_value = ks$p.value,
      runs_a = la[key == k, .N], runs_b = lb[key == k, .N], run_a = ra$run, run_b = rb$run
    )]
    setcolorder(rows, c("what", "kernel", "figure"))[]
  }))
}

# The manifest of each side (its first run's machine and tuning), one row per
# item, with what differs marked.
manifest_table <- function(data_a, data_b) {
  describe <- function(data) {
    d <- machine_description(data)
    g <- data$runs[[1]]$meta$machine$cpufreq_governor
    d[["CPU governor"]] <- if (length(g)) {
      paste(names(g), unlist(g), sep = ":", collapse = " ")
    } else {
      "none"
    }
    vapply(d, function(v) paste(format(v), collapse = " "), "")
  }
  a <- describe(data_a)
  b <- describe(data_b)
  items <- union(names(a), names(b))
  value <- function(x, i) if (i %in% names(x)) x[[i]] else ""
  dt <- data.table(item = items, a = vapply(items, value, "", x = a),
    b = vapply(items, value, "", x = b))
  dt[, differs := a != b]
  # what decides a node's noise first, then the rest
  first <- c("kernel command line", "isolcpus", "nohz_full", "CPU governor", "kernel", "cpu")
  dt[order(-(item %in% first), match(item, first))]
}

plot_compare_losses <- function(a, b, what, title) {
  d <- rbind(data.table(side = "A", us = a), data.table(side = "B", us = b))
  d <- d[us > 0]
  if (nrow(d) == 0) return(NULL)
  ggplot2::ggplot(d, ggplot2::aes(us, colour = side)) +
    ggplot2::stat_ecdf(geom = "step") +
    ggplot2::scale_x_log10() +
    ggplot2::labs(title = title, x = "time a sample lost (us, log)",
      y = "share of samples losing at most x (of those losing any)", colour = NULL) +
    theme_noise()
}

# The verdict first, in words: per pair, what the system took on each side
# and whether the difference is one the intervals can tell.
compare_headlines <- function(table) {
  h <- table[figure == "stolen_percent"]
  if (nrow(h) == 0) return(character())
  words <- sprintf(paste("%s: the system took %s of each CPU on A and %s on B; B - A is %s",
      "points (95%% interval %s to %s): %s."),
    h$what, pct(h$a), pct(h$b), format_number(h$difference), format_number(h$ci_low),
    format_number(h$ci_high), ifelse(h$significant, "a difference",
      "no difference the measurement can tell"))
  paste0("<p class=\"verdict\">", html_escape(words), "</p>")
}

#' @rdname write_report
#' @export
write_comparison <- function(dir_a, dir_b, out = NULL) {
  data_a <- read_results(dir_a)
  data_b <- read_results(dir_b)
  table <- compare_table(data_a$runs, data_b$runs)
  if (nrow(table) == 0) {
    stop(dir_a, " and ", dir_b, ": no run of one measured what a run of the other did ",
      "(same kernel, work kind, frequency, CPU count and injection)")
  }
  manifest <- manifest_table(data_a, data_b)
  out <- out %||% file.path(dir_b, paste0("report-vs-", basename(normalizePath(dir_a))))
  tmp <- paste0(out, sprintf(".%d.tmp", Sys.getpid()))
  unlink(tmp, recursive = TRUE)
  dir.create(tmp, recursive = TRUE)
  done <- FALSE
  on.exit(if (!done) unlink(tmp, recursive = TRUE), add = TRUE)
  fwrite(table, file.path(tmp, "compare.csv"))
  fwrite(manifest, file.path(tmp, "manifests.csv"))

  plots <- character()
  pairs <- unique(table[, .(what, run_a, run_b)])
  for (i in seq_len(nrow(pairs))) {
    p <- pairs[i]
    ra <- data_a$runs[[p$run_a]]
    rb <- data_b$runs[[p$run_b]]
    loss <- function(run) {
      unlist(lapply(seq_along(run$threads), function(j) sample_losses(run, j, "robust")$us),
        use.names = FALSE)
    }
    plot <- plot_compare_losses(loss(ra), loss(rb), p$what, paste(p$what, ": A and B"))
    if (!is.null(plot)) {
      caption <- paste0(p$what, ": the distribution of the time each sample lost (us, log), ",
        "A and B overlaid: the share of the samples that lost any time which lost at most x. ",
        "The curve further right is the noisier; where they part is the size of noise that differs.")
      plots[[caption]] <- save_plot(plot, tmp, paste0("compare-", i, "-losses"))
    }
    if (fixed_time(kernel_info(ra$kernel))) {
      # A's noisiest CPUs and its quietest, where it has more than a few
      cpus <- vapply(detail_run(ra, noise_summary(ra, "A")$noise_percent)$threads,
        function(t) t$cpu, integer(1))
      s <- rbind(peak_table(list(A = ra))$spectra[, side := "A"],
        peak_table(list(B = rb))$spectra[, side := "B"])[cpu %in% cpus]
      plot <- ggplot2::ggplot(s, ggplot2::aes(frequency_hz, power, colour = side)) +
        ggplot2::geom_line(linewidth = 0.3, alpha = 0.7) + ggplot2::scale_y_log10() +
        ggplot2::facet_wrap(~cpu, ncol = 1, labeller = ggplot2::label_both) +
        ggplot2::labs(title = paste(p$what, ": spectra of A and B"), x = "frequency (Hz)",
          y = "power (counts^2)", colour = NULL) + theme_noise()
      caption <- paste0(p$what, ": the ", kernel_info(ra$kernel)$label, " spectra (power in counts^2, log, against Hz) of A ",
        "and B overlaid, per CPU. A line in one and not the other is a periodic source one ",
        "system has.", detail_note(length(cpus), length(ra$threads), "CPUs of A",
          "compare.csv"))
      plots[[caption]] <- save_plot(plot, tmp, paste0("compare-", i, "-spectrum"),
        height = 1.5 + 2 * length(cpus))
    }
  }

  significant <- table[!is.na(ci_low)]
  body <- c(
    "<h2>A and B</h2>",
    compare_headlines(table),
    html_list(c(A = normalizePath(dir_a), B = normalizePath(dir_b))),
    sprintf("<p class=\"verdict\">%d of %d figures differ significantly (95%% interval of B - A excludes 0)</p>",
      sum(significant$significant), nrow(significant)),
    "<h2>Manifests</h2>",
    "<p>Each side's machine and tuning; <b>differs</b> marks what is not the same. Also in manifests.csv.</p>",
    html_table(manifest[, .(item, a, b, differs = ifelse(differs, "differs", ""))]),
    "<h2>Plots</h2>",
    "<p>Per pair of runs that measured the same thing: stolen_percent, the headline, the",
    "share of the time the system took (%; its interval from the ranks' own intervals over",
    "blocks of their time, or the spread between repeated runs where larger);",
    "lost_percent, the share of the time",
    "beyond the best sample (%); p99_us and p99_9_us, percentiles of the time each sample lost (us;",
    "of the detours, where a kernel records only those); above_10us_per_s, losses over 10 us",
    "a second; max_us, the",
    "longest (no interval: a maximum cannot be bootstrapped). difference is B - A, ci_low and",
    "ci_high its 95% block-bootstrap interval (", compare_blocks, "stretches per rank,",
    compare_replicates, "replicates). ks: the two-sample Kolmogorov-Smirnov test of the",
    "samples' losses; samples in a run are not independent, so its p-value overstates",
    "significance: read it next to the intervals. Also in compare.csv.</p>",
    html_table(table[, .(what, figure, a, b, difference, ci_low, ci_high,
      significant = ifelse(significant, "yes", ""), ks_statistic, ks_p_value)]),
    unlist(mapply(html_plot, plots, names(plots)))
  )
  writeLines(html_page(sprintf("noisebench comparison: %s against %s", basename(dir_b),
    basename(dir_a)), body), file.path(tmp, "index.html"))
  unlink(out, recursive = TRUE)
  if (!file.rename(tmp, out)) stop("cannot rename ", tmp, " to ", out)
  done <- TRUE
  invisible(file.path(out, "index.html"))
}
