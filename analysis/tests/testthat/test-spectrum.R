test_that("FFT lengths have only the factors 2, 3 and 5", {
  expect_equal(fft_length(100000), 100000)
  n <- fft_length(70001)
  expect_lte(n, 70001)
  for (p in c(2, 3, 5)) while (n %% p == 0) n <- n / p
  expect_equal(n, 1)
  expect_gt(fft_length(70001), 69000)
})

test_that("a sinusoid is found at its frequency with its variance", {
  fs <- 10000
  t <- seq_len(20000) / fs
  spec <- counts_spectrum(1000 + 50 * sin(2 * pi * 123 * t), fs)
  peaks <- find_peaks(spec)
  expect_equal(peaks$frequency_hz[1], 123, tolerance = 1e-3)
  expect_equal(peaks$power[1], 50^2 / 2, tolerance = 0.01)
  expect_equal(nrow(peaks), 1)
})

test_that("a line that wanders in frequency is one peak with all its power", {
  fs <- 10000
  # a quarter of the run each at 695, 700, 705 and 710 Hz: the line of a
  # source timed by sleeping, broken into fragments a few Hz apart
  hz <- rep(c(695, 700, 705, 710), each = 5000)
  phase <- 2 * pi * cumsum(hz) / fs
  spec <- counts_spectrum(1000 + 50 * sin(phase), fs)
  peaks <- find_peaks(spec)
  expect_equal(nrow(peaks), 1)
  expect_gt(peaks$frequency_hz, 690)
  expect_lt(peaks$frequency_hz, 715)
  # the fragments' bins hold most of the sinusoid's variance
  expect_gt(peaks$power, 0.8 * 50^2 / 2)
  expect_lte(peaks$power, 50^2 / 2 * 1.01)
})

test_that("an impulse train is found at its rate and harmonics", {
  set.seed(2)
  spec <- counts_spectrum(impulse_counts(20000, 20), 10000)
  peaks <- find_peaks(spec, top = 20)
  # a hit every 20 quanta of 100 us: 500 Hz and its multiples up to 5 kHz
  expect_equal(sort(peaks$frequency_hz), seq(500, 5000, by = 500), tolerance = 1e-6)
})

test_that("a line's share is the time a detour repeating at its rate takes", {
  set.seed(2)
  dir <- withr_tempdir()
  # half a quantum lost every 20: 2.5% of the time
  write_ftq(dir, "f", list(impulse_counts(20000, 20, depth = 500)), 10000)
  peaks <- peak_table(read_results(dir)$runs)$peaks
  expect_equal(peaks[abs(frequency_hz - 500) < 1]$share_percent, 2.5, tolerance = 0.02)
})

test_that("a run whose quantum -i set (2^BITS ticks) is read at its own rate", {
  set.seed(3)
  dir <- withr_tempdir()
  # 2^17 ticks at 2.5 ticks/ns: a quantum of 52.4288 us, 19073.5 Hz; a detour
  # every 20 quanta repeats at 953.7 Hz
  fs <- 2.5e9 / 2^17
  write_ftq(dir, "f", list(impulse_counts(20000, 20, depth = 500)), fs, tpn = 2.5, bits = 17)
  runs <- read_results(dir)$runs
  expect_null(runs$f$meta$frequency_hz)
  peaks <- peak_table(runs)$peaks
  # the impulse train's lines, at its rate and its harmonics, each 2.5%
  line <- peaks[abs(frequency_hz - fs / 20) < 1]
  expect_equal(nrow(line), 1)
  expect_equal(line$share_percent, 2.5, tolerance = 0.02)
  expect_equal(noise_summary(runs$f, "f")$sampling_hz, fs)
})

test_that("long runs average segment spectra and keep the line's variance", {
  fs <- 10000
  t <- seq_len(2^19) / fs
  spec <- counts_spectrum(1000 + 20 * sin(2 * pi * 250 * t), fs)
  expect_equal(nrow(spec), 2^16)
  peaks <- find_peaks(spec)
  expect_equal(peaks$frequency_hz[1], 250, tolerance = 1e-3)
  # 250 Hz lies between two bins: the line's power is summed over its bins
  expect_equal(peaks$power[1], 20^2 / 2, tolerance = 0.05)
})

test_that("segments transformed in pairs give each segment's periodogram, averaged", {
  set.seed(5)
  n <- 1024
  # the mean of each segment's one-sided periodogram, bin 0 left out
  bartlett <- function(x, k) {
    p <- rowMeans(vapply(seq_len(k), function(j) {
      Mod(stats::fft(x[(j - 1) * n + seq_len(n)]))^2
    }, numeric(n)))[seq_len(n / 2) + 1] / n^2 * 2
    p[n / 2] <- p[n / 2] / 2
    p
  }
  # an even and an odd number of segments (the last one alone), and quanta
  # left over that no segment takes
  for (k in c(4, 5)) {
    x <- 1000 + stats::rnorm(k * n + 17, sd = 30) + 40 * sin(seq_len(k * n + 17) / 7)
    expect_equal(counts_spectrum(x, 10000, segment = n)$power, bartlett(x, k), tolerance = 1e-10)
  }
})

test_that("a noise floor without lines has no peaks", {
  set.seed(3)
  expect_equal(nrow(find_peaks(counts_spectrum(1000 + stats::rnorm(20000), 10000))), 0)
})

test_that("frequencies fold into the band of the sampling rate", {
  expect_equal(alias_hz(4500, 7000), 2500)
  expect_equal(alias_hz(500, 7000), 500)
  expect_equal(alias_hz(6000, 7000), 1000)
})

test_that("the two-frequency test tells interference from benchmark artifacts", {
  set.seed(4)
  # external: every 2 ms of time (20 quanta at 10 kHz, 14 at 7 kHz);
  # artifact: every 256 quanta whatever the rate (the TLB miss of brho's FTQ notes)
  both <- function(n, every_external) {
    x <- impulse_counts(n, every_external, depth = 300)
    x[seq(7, n, by = 256)] <- x[seq(7, n, by = 256)] - 300
    x
  }
  s10 <- counts_spectrum(both(100000, 20), 10000)
  s7 <- counts_spectrum(both(70000, 14), 7000)
  p10 <- classify_peaks(find_peaks(s10, top = 200), 10000, s7, 7000)
  p7 <- classify_peaks(find_peaks(s7, top = 200), 7000, s10, 10000)
  origin_at <- function(p, f) p[which.min(abs(frequency_hz - f))][abs(frequency_hz - f) < 0.5]$origin
  expect_equal(origin_at(p10, 500), "external")
  expect_equal(origin_at(p7, 500), "external")
  expect_equal(origin_at(p10, 10000 / 256), "artifact")
  expect_equal(origin_at(p7, 7000 / 256), "artifact")
  # without a partner nothing can be told
  expect_true(all(classify_peaks(find_peaks(s10), 10000)$origin == "unknown"))
})

test_that("every partner votes on a line's origin, the nearest in time named", {
  dir <- withr_tempdir()
  set.seed(5)
  # the 10 kHz run has its line at 500 Hz; of the three 7 kHz runs, the one
  # taken right after it lost the line (a burst of other noise scattered
  # it), the two later ones show it
  started <- function(prefix, utc) {
    path <- file.path(dir, paste0(prefix, ".json"))
    meta <- jsonlite::read_json(path)
    meta$start <- list(utc = utc)
    jsonlite::write_json(meta, path, auto_unbox = TRUE, digits = NA)
  }
  write_ftq(dir, "f10", list(impulse_counts(40000, 20, depth = 300)), 10000)
  write_ftq(dir, "f7a", list(2000 + stats::rpois(28000, 3)), 7000)
  write_ftq(dir, "f7b", list(impulse_counts(28000, 14, depth = 300)), 7000)
  write_ftq(dir, "f7c", list(impulse_counts(28000, 14, depth = 300)), 7000)
  started("f10", "2026-01-01T00:00:00.0Z")
  started("f7b", "2026-01-01T00:05:00.0Z")
  started("f7a", "2026-01-01T00:00:05.0Z")
  started("f7c", "2026-01-01T00:09:00.0Z")
  peaks <- peak_table(read_results(dir)$runs)$peaks
  at500 <- peaks[run == "f10" & abs(frequency_hz - 500) < 0.5]
  expect_equal(at500$origin, "external")
  expect_equal(at500$partner_run, "f7a")
  expect_equal(c(at500$partners, at500$agreeing), c(3, 2))
  # the one partner alone could not tell
  alone <- classify_peaks(find_peaks(counts_spectrum(read_results(dir)$runs$f10$threads[[1]]$data$count,
    10000)), 10000, counts_spectrum(2000 + stats::rpois(28000, 3), 7000), 7000)
  expect_equal(alone[abs(frequency_hz - 500) < 0.5]$origin, "unknown")
})

test_that("a tie between partners, or no verdict, is unknown", {
  peaks <- data.table(frequency_hz = c(100, 200, 300), power = 1)
  verdict <- function(...) data.table(origin = c(...), partner_hz = 7000)
  voted <- vote_on_origin(peaks, list(verdict("external", "artifact", "unknown"),
    verdict("artifact", "artifact", "unknown"), verdict("external", "unknown", "unknown")))
  expect_equal(voted$origin, c("external", "artifact", "unknown"))
  expect_equal(voted$agreeing, c(2L, 2L, 0L))
  expect_equal(vote_on_origin(peaks, list())$origin, rep("unknown", 3))
})

test_that("only sampling rates that are not multiples make a pair", {
  expect_true(frequencies_independent(10000, 7000))
  expect_false(frequencies_independent(10000, 5000))
  expect_false(frequencies_independent(7000, 21000))
})

test_that("a line's share stays a number when noise took most quanta whole", {
  dir <- withr_tempdir()
  # 10 kHz, 700 us busy every 1 ms: 7 of every 10 quanta do no work
  counts <- rep(c(rep(1000, 3), rep(0, 7)), 2000)
  write_ftq(dir, "f", list(counts), 10000)
  peaks <- peak_table(read_results(dir)$runs)$peaks
  line <- peaks[which.min(abs(frequency_hz - 1000))]
  expect_equal(line$frequency_hz, 1000, tolerance = 1e-6)
  expect_true(is.finite(line$share_percent) && line$share_percent > 0)
})

test_that("of many CPUs, the spectra are those shown and their partners', read alone", {
  dir <- withr_tempdir()
  set.seed(6)
  # 12 CPUs, the 500 Hz detour deeper on each higher one; at 7 kHz CPU 1 is
  # the quietest, at 10 kHz CPU 0
  depth10 <- 50 * (0:11)
  depth7 <- c(50, 0, 50 + 50 * (1:10))
  write_ftq(dir, "f10", lapply(depth10, function(d) impulse_counts(20000, 20, d, sd = 0.5)), 10000)
  write_ftq(dir, "f7", lapply(depth7, function(d) impulse_counts(14000, 14, d, sd = 0.5)), 7000)
  runs <- read_results(dir, samples = "when_used")$runs
  summary <- rbindlist(lapply(names(runs), function(n) noise_summary(runs[[n]], n)))
  keep <- spectrum_threads(runs, summary)
  # each run's own 7 noisiest and quietest, and the other's quietest as partner
  expect_equal(keep$f10, c(1, 2, 6:12))
  expect_equal(keep$f7, c(1, 2, 6:12))
  every <- peak_table(read_results(dir, samples = "when_used")$runs)$peaks
  # the CPUs neither run shows are never read
  unlink(file.path(dir, sprintf("f%s_%d_counts.dat", rep(c(10, 7), each = 3), 2:4)))
  some <- peak_table(runs, keep)$peaks
  expect_setequal(unique(some$cpu), c(0, 1, 5:11))
  expect_equal(some, every[cpu %in% c(0, 1, 5:11)])
  expect_true(all(some[cpu >= 5 & abs(frequency_hz - 500) < 0.5]$origin == "external"))
})

test_that("R's own FFT gives FFTW's spectrum and peaks, so fftw is optional", {
  set.seed(3)
  # a line, an impulse train and noise, over three segments (one odd out)
  t <- seq_len(3 * 4096) / 10000
  x <- impulse_counts(length(t), 20) + 40 * sin(2 * pi * 123 * t) + stats::rnorm(length(t))
  own <- counts_spectrum(x, 10000, segment = 4096, fftw = FALSE)
  found <- find_peaks(own, top = 20)$frequency_hz
  for (hz in c(123, 500, 1000)) expect_lt(min(abs(found - hz)), 10000 / 4096)
  skip_if_not_installed("fftw")
  fast <- counts_spectrum(x, 10000, segment = 4096, fftw = TRUE)
  expect_equal(own, fast, tolerance = 1e-9)
  expect_equal(find_peaks(own, top = 20), find_peaks(fast, top = 20), tolerance = 1e-9)
})
