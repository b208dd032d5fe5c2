# The slowdown at scale, on traces whose answer is known.

periodic_trace <- function(period_ns, detour_ns, duration_ns, phase_ns = 0) {
  starts <- seq(phase_ns, duration_ns - 1, by = period_ns)
  list(start = starts, length = rep(detour_ns, length(starts)), duration = duration_ns)
}

test_that("a window sees the detour under way and every detour starting in it", {
  tr <- periodic_trace(1000, 100, 10000)
  # windows of 500 ns: at 50, the 50 ns left of the detour begun at 0; at 9950, the
  # detour at 10000 is the trace's first again
  expect_equal(window_noise(tr, c(0, 50, 150, 600, 9950), c(500, 1000)),
    cbind(c(100, 50, 0, 100, 100), c(100, 150, 100, 100, 100)))
})

test_that("the expected maximum of N draws is the sum over the distribution's steps", {
  set.seed(8)
  w <- c(rep(0, 300), stats::rexp(700, 1 / 50), 5000)
  p <- seq_along(w) / length(w)
  for (n in c(1, 3, 100, 1e4, 1e6)) {
    expect_equal(expected_max(w, n), sum(sort(w) * diff(c(0, p^n))), tolerance = 1e-12)
  }
  # one draw is the mean; beyond every value's weight, the largest
  expect_equal(expected_max(w, 1), mean(w), tolerance = 1e-12)
  expect_equal(expected_max(c(2, 7), 1e9), 7)
  expect_equal(expected_max(4, c(1, 10)), c(4, 4))
})

test_that("one detour of d every P: the slowdown tends to 1 + d/T, co-scheduled to the mean", {
  # 50 us every 10 ms over 100 s; phases of 1 ms (T < P)
  tr <- periodic_trace(1e7, 5e4, 1e11)
  p <- predict_slowdown(list(tr), phases_us = 1000, processes = c(1, 10, 1e3, 1e5),
    simulator = NA)
  unco <- p[mode == "uncoordinated"]
  # one process: the mean noise of a 1 ms window, d T / P (plus the detours under way)
  expect_equal(unco[processes == 1, slowdown], 1 + 5e4 / 1e7, tolerance = 0.002)
  # many: nearly every phase has a process hit, the phase takes T + d
  expect_equal(unco[processes == 1e5, slowdown], 1 + 5e4 / 1e6, tolerance = 1e-6)
  expect_true(unco$slowdown[2] > unco$slowdown[1])
  expect_true(all(diff(unco$slowdown) >= 0))
  # co-scheduled: every process at the same offset, the mean at every N
  co <- p[mode == "co-scheduled"]
  expect_equal(co$slowdown, rep(1 + 5e4 / 1e7, 4), tolerance = 0.002)
})

test_that("a detour in a phase with probability p: 1 - (1 - p)^N of the phases are hit", {
  set.seed(7)
  # a Poisson stream of 1 us detours, 5 a second: a 1 ms window is hit with p = 1 - exp(-0.005)
  duration <- 2000e9
  starts <- sort(stats::runif(stats::rpois(1, 5 * 2000), 0, duration))
  tr <- list(start = starts, length = rep(1000, length(starts)), duration = duration)
  n <- c(1, 10, 100, 1000)
  p <- predict_slowdown(list(tr), phases_us = 1000, processes = n, windows = 2e5,
    simulator = NA)
  # the share of offsets whose window [o, o + T) meets a detour [s, s + 1 us) of this
  # trace: the union of the intervals [s - T, s + 1 us), around the circle
  gaps <- diff(c(starts, starts[1] + duration))
  hit <- sum(pmin(gaps, 1e6 + 1000)) / duration
  unco <- p[mode == "uncoordinated"]
  # the window sample's binomial error on p, carried through 1 - (1 - p)^N
  se <- sqrt(hit * (1 - hit) / 2e5)
  dn <- n * (1 - hit)^(n - 1) * se
  expect_true(all(abs(unco$phases_hit_percent / 100 - (1 - (1 - hit)^n)) < 4 * dn + 1e-9))
  # a hit phase takes T + 1 us (two detours in one phase, or part of one, are rare)
  expect_equal(unco$slowdown - 1, unco$phases_hit_percent / 100 * 1e-3, tolerance = 0.05)
})

test_that("co-scheduled ranks measured together share their offsets", {
  # two ranks, detours of 100 us every 10 ms, rank 1 half a period later
  a <- periodic_trace(1e7, 1e5, 1e10)
  b <- periodic_trace(1e7, 1e5, 1e10, phase_ns = 5e6)
  p <- predict_slowdown(list(a, b), phases_us = 1000, processes = c(1, 2), simulator = NA)
  co <- p[mode == "co-scheduled"]
  # both ranks' windows are hit 1 time in 10 and never together: the max is hit 2 in 10
  expect_equal(co[processes == 2, phases_hit_percent], 20 + 2, tolerance = 0.1)
})

test_that("the model's figure where it holds, the simulation's elsewhere, each said", {
  skip_if(is.na(noisebench_simulator), "no noise-simulate built")
  # 200 us every 10 ms: P q = 0.02 P, so the model holds up to 50 processes at
  # phases of 200 us or more
  tr <- periodic_trace(1e7, 2e5, 1e10)
  p <- predict_slowdown(list(tr), phases_us = c(100, 1000), processes = c(1, 10, 1000))
  expect_equal(p$model_holds, p$phase_us >= 200 & pmin(p$processes,
    ifelse(p$mode == "co-scheduled", 1, Inf)) * 0.02 <= 1)
  expect_equal(p[model_holds == TRUE, source], rep("model", sum(p$model_holds)))
  expect_equal(p[model_holds == TRUE, slowdown], p[model_holds == TRUE, model_slowdown])
  out <- p[model_holds == FALSE]
  expect_equal(unique(out$source), "simulation")
  expect_true(all(out$simulated_se >= 0))
  # one process under a periodic detour loses d of every P: 1 / (1 - 0.02)
  one <- out[processes == 1 & mode == "uncoordinated"]
  expect_equal(one$slowdown, rep(1 / 0.98, nrow(one)), tolerance = 1e-3)
  # beyond the processes it simulates, the model's figure, said so
  q <- predict_slowdown(list(tr), phases_us = 1000, processes = 1000, simulate_up_to = 100)
  expect_match(q[mode == "uncoordinated", source], "not simulated above 100 processes")
})

test_that("a simulator that fails is an error saying what it said, its traces removed", {
  fails <- tempfile("fails", fileext = ".sh")
  writeLines(c("#!/bin/sh", "echo no such phase >&2", "exit 3"), fails)
  Sys.chmod(fails, "755")
  # the model does not hold at 1,000 processes: the simulation is asked for
  tr <- periodic_trace(1e7, 2e5, 1e10)
  left <- function() list.files(tempdir(), "^noise-traces")
  before <- left()
  expect_error(predict_slowdown(list(tr), phases_us = 1000, processes = 1000, simulator = fails),
    "fails.*[.]sh failed: no such phase")
  expect_equal(left(), before)
})

test_that("each run is modelled by an R process of its own, whose failure says what it said", {
  dir <- withr_tempdir()
  # 200 us every 10 ms: the model does not hold from 100 processes, which
  # noise-simulate is asked for
  d <- data.table(start_ns = seq(0, 9.9e9, by = 1e7), length_ns = 2e5 + 10)
  write_selfish(dir, "selfish", list(d, d), period_s = 10)
  runs <- list(selfish = read_run(file.path(dir, "selfish.json")))
  traces <- lapply(1:2, function(i) noise_trace(runs$selfish, i))
  left <- function() list.files(tempdir(), "^noise-scale")
  before <- left()
  if (!is.na(noisebench_simulator)) {
    # more runs than CPUs here: a worker models two, one after the other
    more <- rep(runs, cpus_allowed() + 1)
    names(more) <- paste0("run", seq_along(more))
    rows <- scale_table(more)
    expected <- predict_slowdown(traces)
    expect_equal(rows[, names(expected), with = FALSE], rbindlist(rep(list(expected),
      length(more))))
    expect_equal(unique(rows[, .(run, kernel, ranks, traces)]),
      data.table(run = names(more), kernel = "selfish", ranks = 2L, traces = 2L))
    expect_true("simulation" %in% rows$source)
  }
  fails <- tempfile("fails", fileext = ".sh")
  writeLines(c("#!/bin/sh", "echo no such phase >&2", "exit 3"), fails)
  Sys.chmod(fails, "755")
  old <- Sys.getenv("NOISEBENCH_SIMULATE")
  Sys.setenv(NOISEBENCH_SIMULATE = fails)
  on.exit(Sys.setenv(NOISEBENCH_SIMULATE = old))
  expect_error(scale_table(runs), "scale_worker.*failed:.*fails.*[.]sh failed: no such phase")
  expect_equal(left(), before)
})

test_that("a phase too long for the trace is left out", {
  tr <- periodic_trace(1e6, 1e3, 1e8) # 100 ms of trace
  p <- predict_slowdown(list(tr))
  expect_equal(max(p$phase_us), 10000)
})

test_that("the report has the prediction, its sentence, figure and LogGOPSim traces", {
  dir <- withr_tempdir()
  d <- data.table(start_ns = seq(0, 9.9e9, by = 1e7), length_ns = 5e4 + 10)
  write_selfish(dir, "selfish", list(d, d), period_s = 10)
  page <- paste(readLines(write_report(dir, pdf = FALSE)), collapse = "\n")
  scale <- fread(file.path(dir, "report", "scale.csv"))
  expect_setequal(unique(scale$mode), c("uncoordinated", "co-scheduled"))
  one_ms <- scale[phase_us == 1000 & processes == 1e5 & mode == "uncoordinated"]
  expect_equal(one_ms$slowdown, 1.05, tolerance = 1e-4)
  # the first screen quotes it at the survey's size and at 10,000 processes
  expect_match(page, "A bulk-synchronous application of 2 processes synchronising every 1 ms")
  expect_match(page, "x at 10,000 processes")
  expect_true(file.exists(file.path(dir, "report", "scale.png")))
  trace <- readLines(file.path(dir, "report", "loggopsim", "selfish-rank1.txt"))
  expect_match(trace[1], "^# ")
  expect_equal(trace[2:3], c("0\t50000", "10000000\t50000"))
})

test_that("samples that tile the run are the detours beyond the best sample", {
  dir <- withr_tempdir()
  set.seed(5)
  ticks <- round(1000 + stats::rexp(5000, 1 / 50))
  write_fwq(dir, "fwq", list(ticks), tpn = 2)
  tiled <- noise_trace(read_results(dir)$runs$fwq, 1)
  # the same as a list of detours: each sample's start and its excess, in ns
  events <- list(start = (cumsum(ticks) - ticks) / 2, length = (ticks - min(ticks)) / 2,
    duration = sum(ticks) / 2)
  offsets <- stats::runif(500) * events$duration
  expect_equal(window_noise(tiled, offsets, c(3e3, 5e4)),
    window_noise(events, offsets, c(3e3, 5e4)))
  expect_equal(trace_seconds(tiled), sum(ticks) / 2 / 1e9)
})

test_that("a selfish trace lasts until its last detour, past a period that left out the store's growth", {
  dir <- withr_tempdir()
  # period_s leaves out 50 ms the detour store took to grow: a detour at 1.02 s
  write_selfish(dir, "selfish", list(data.table(start_ns = c(1e8, 5e8, 1.02e9),
    length_ns = c(5000, 5000, 5000))), period_s = 1)
  run <- read_results(dir)$runs$selfish
  tr <- noise_trace(run, 1)
  expect_gte(tr$duration, 1.02e9 + 5000)
  file <- write_noise_trace(tr, tempfile(), "# rank 0")
  expect_equal(read_noise_trace(file)$duration, tr$duration)
})
