# The FTQ spectrum, its peaks, and the two-frequency test of brho's FTQ notes: interference
# from outside the benchmark stays at the same Hz when the sampling frequency
# changes; an artifact of the benchmark (a hit every so many samples, e.g. a
# TLB miss every 256 stores) moves with it.

# The largest n <= x whose only prime factors are 2, 3 and 5: R's FFT is
# fast on those lengths, and dropping a few trailing quanta keeps the
# frequency grid exact (bin k is k * fs / n).
fft_length <- function(x) {
  best <- 1
  p2 <- 1
  while (p2 <= x) {
    p3 <- p2
    while (p3 <= x) {
      p5 <- p3
      while (p5 <= x) {
        best <- max(best, p5)
        p5 <- p5 * 5
      }
      p3 <- p3 * 3
    }
    p2 <- p2 * 2
  }
  best
}

# The sampling rate of an FTQ run, one quantum a sample, whether --freq or
# -i BITS (a quantum of 2^BITS ticks) set the quantum.
run_sampling_hz <- function(meta) 1e9 / meta$quantum_ns

# One-sided periodogram of the counts, mean removed. power is the variance
# of the counts carried by each frequency (a sinusoid of amplitude A gives
# A^2 / 2 at its frequency), in counts^2; frequency_hz from the quantum.
# Runs longer than `segment` quanta are cut into segments of that length
# whose periodograms are averaged (Bartlett): 2^17 quanta resolve 0.08 Hz
# at 10 kHz, and one FFT over millions of quanta would only add variance.
# FFTW does the transforms where R has it (R's own FFT took most of a
# report's time), else stats::fft, with the same result; one pair of
# segments at a time so that no temporary outgrows the cache. The
# counts are real, so one complex transform serves two segments: for
# Z = FFT(a + ib), |A_k|^2 + |B_k|^2 = (|Z_k|^2 + |Z_(n-k)|^2) / 2, and only
# that sum is wanted.
counts_spectrum <- function(counts, sampling_hz, segment = 2^17,
                            fftw = requireNamespace("fftw", quietly = TRUE)) {
  n <- if (length(counts) > segment) segment else fft_length(length(counts))
  k <- length(counts) %/% n
  transform <- fft_of_length(n, fftw)
  sums <- numeric(n)
  for (j in seq_len(ceiling(k / 2)) * 2 - 1) {
    from <- (j - 1) * n + 1
    a <- counts[from:(from + n - 1)]
    # an odd segment out is its own pair: its |Z_k| = |Z_(n-k)|
    z <- if (j == k) {
      transform(a)
    } else {
      transform(complex(real = a, imaginary = counts[(from + n):(from + 2 * n - 1)]))
    }
    sums <- sums + (Re(z)^2 + Im(z)^2)
  }
  # the mean only moves bin 0, which is left out
  half <- seq_len(floor(n / 2))
  power <- (sums[half + 1] + sums[n - half + 1]) / 2 / k / n^2 * 2
  if (n %% 2 == 0) power[length(power)] <- power[length(power)] / 2
  data.table(frequency_hz = as.numeric(half) * sampling_hz / n, power = power)
}

# The discrete Fourier transform of a vector of length n: FFTW's, planned
# once for every segment, or R's own, which Spack's R has.
fft_of_length <- function(n, fftw) {
  if (!fftw) return(function(z) stats::fft(z))
  plan <- fftw::planFFT(n)
  function(z) fftw::FFT(z, plan = plan)
}

# The spectrum's noise floor at each frequency: a running median over
# `width` bins, so a line stands out against its neighbourhood and a broad
# red-noise slope does not count as peaks; and never below what rounding the
# counts to integers spreads over the spectrum (white noise of variance 1/12
# gives 2 (1/12) / n per bin), so a line in noiseless data is one line.
spectrum_floor <- function(power, width = 201) {
  n <- 2 * length(power)
  width <- min(width, length(power) - (length(power) + 1) %% 2)
  running <- if (width < 3) {
    rep(stats::median(power), length(power))
  } else {
    stats::runmed(power, width, endrule = "median", algorithm = "Turlach")
  }
  pmax(running, 1 / (6 * n))
}

# The main peaks: local maxima standing `min_ratio` times above the floor,
# the `top` strongest lines. A line between two bins leaks into its
# neighbours, so a peak's power is that of its bin and `merge_bins` bins
# either side. A source timed by sleeping wanders in frequency by its
# wake-up latency (a few percent) and its line breaks into fragments: the
# local maxima within `merge_rel` of a stronger one are that line, whose
# power is summed over all their bins.
find_peaks <- function(spectrum, top = 20, min_ratio = 20, merge_bins = 3, merge_rel = 0.03) {
  p <- spectrum$power
  n <- length(p)
  if (n < 3) return(spectrum[0][, ratio := numeric()])
  floor_p <- spectrum_floor(p)
  left <- c(-Inf, p[-n])
  right <- c(p[-1], -Inf)
  cand <- which(p >= left & p > right & p > min_ratio * floor_p)
  cand <- cand[order(-p[cand])]
  kept <- integer()
  line_of <- integer(length(cand))
  for (k in seq_along(cand)) {
    i <- cand[k]
    near <- abs(kept - i) <= pmax(merge_bins, merge_rel * kept)
    if (any(near)) {
      line_of[k] <- which(near)[1]
    } else if (length(kept) < top) {
      kept <- c(kept, i)
      line_of[k] <- length(kept)
    }
  }
  line <- vapply(seq_along(kept), function(j) {
    bins <- unique(unlist(lapply(cand[line_of == j], function(i) {
      max(1, i - merge_bins):min(n, i + merge_bins)
    })))
    sum(p[bins])
  }, 0)
  out <- spectrum[kept]
  out[, `:=`(power = line, ratio = p[kept] / floor_p[kept])]
  out[]
}

# The share (%) of the time a short detour repeating at a line's frequency
# takes, were the line one: such a detour, taking a share s of every
# period, takes an impulse train out of the counts, whose lines have the
# amplitude 2 s times the undisturbed count (the median quantum's) and the
# power half its square. When noise took most quanta whole (a median of 0),
# the best quantum's count is the undisturbed one: the share stays a number.
# The kernels compute the same (src/kernels/quantum.c).
line_share_percent <- function(power, median_count, max_count) {
  undisturbed <- if (median_count > 0) median_count else max_count
  100 * sqrt(power / 2) / undisturbed
}

# Where a frequency shows in a run sampled at fs: folded into [0, fs / 2].
alias_hz <- function(f, fs) abs(f - fs * round(f / fs))

# The power of the strongest line within tol_hz of f (summed over its bins,
# as find_peaks does), or 0 when nothing there stands min_ratio above the
# floor.
line_power <- function(spectrum, floor_p, f, tol_hz, min_ratio, merge_bins = 3) {
  near <- which(abs(spectrum$frequency_hz - f) <= tol_hz)
  if (length(near) == 0) return(0)
  p <- spectrum$power
  i <- near[which.max(p[near])]
  if (p[i] <= min_ratio * floor_p[i]) return(0)
  sum(p[max(1, i - merge_bins):min(length(p), i + merge_bins)])
}

# Classifies the peaks of a run sampled at fs_a against the spectrum of the
# same thread sampled at fs_b: "external" when the partner has a line at the
# same Hz (folded into its band), "artifact" when it has one where a fixed
# number of samples would put it (f * fs_b / fs_a), "unknown" when it has
# both, neither, or there is no partner. A partner's line counts when it
# carries at least `min_share` of the peak's power, both relative to the
# mean count squared (quanta of other lengths hold other counts): a faint
# line that happens to lie there is not the same source.
classify_peaks <- function(peaks, fs_a, partner = NULL, fs_b = NA, mean_a = 1, mean_b = 1,
                           min_ratio = 10, min_share = 0.1, rel_tol = 0.005) {
  peaks <- copy(peaks)
  if (is.null(partner) || nrow(peaks) == 0) {
    return(peaks[, `:=`(origin = rep("unknown", .N), partner_hz = rep(NA_real_, .N))][])
  }
  floor_b <- spectrum_floor(partner$power)
  bin_b <- fs_b / (2 * nrow(partner))
  origin <- vapply(seq_len(nrow(peaks)), function(k) {
    f <- peaks$frequency_hz[k]
    wanted <- min_share * peaks$power[k] / mean_a^2 * mean_b^2
    tol <- max(3 * bin_b, rel_tol * f)
    same <- line_power(partner, floor_b, alias_hz(f, fs_b), tol, min_ratio) >= wanted
    moved <- line_power(partner, floor_b, alias_hz(f * fs_b / fs_a, fs_b), tol * fs_b / fs_a,
      min_ratio) >= wanted
    if (same && !moved) "external" else if (moved && !same) "artifact" else "unknown"
  }, character(1))
  peaks[, `:=`(origin = origin, partner_hz = fs_b)][]
}

# Two sampling frequencies fit the test when neither is a multiple of the
# other (brho's FTQ notes: 10 kHz and 7 kHz).
frequencies_independent <- function(fs_a, fs_b) {
  ratio <- max(fs_a, fs_b) / min(fs_a, fs_b)
  abs(ratio - round(ratio)) > 1e-6
}

# Spectra and classified peaks of every FTQ run and thread, or of those at
# the positions keep[[run]] (spectrum_threads) only. A run's partners
# for the two-frequency test are spectrum_partners'; a thread's are their
# threads on its host (partner_threads), and its peaks' origin their vote
# (vote_on_origin). partner_run names the nearest.
#' @rdname noise_summary
#' @export
peak_table <- function(runs, keep = NULL) {
  timed <- runs_where(runs, fixed_time)
  for (a in intersect(names(keep), names(timed))) timed[[a]] <- subset_run(timed[[a]], keep[[a]])
  if (length(timed) == 0) return(list(peaks = data.table(), spectra = data.table()))
  # each thread's spectrum on a core of its own
  jobs <- unlist(lapply(names(timed), function(a) {
    lapply(timed[[a]]$threads, function(t) list(run = a, kernel = timed[[a]]$kernel, thread = t))
  }), recursive = FALSE)
  computed <- lapply_cores(jobs, function(job) {
    t <- job$thread
    x <- noise_values(job, t$data)
    counts_spectrum(x, run_sampling_hz(timed[[job$run]]$meta))[, `:=`(unit = t$unit, cpu = t$cpu,
      host = t$host,
      mean_count = sum(x) / length(x), median_count = median_of(x, t$table %||% value_table(x)),
      max_count = max(x))]
  })
  spectra <- lapply(names(timed), function(a) {
    mine <- computed[vapply(jobs, function(job) job$run == a, logical(1))]
    setNames(mine, vapply(mine, function(s) paste0(s$host[1], ":", s$cpu[1]), character(1)))
  })
  names(spectra) <- names(timed)
  places <- lapply(timed, thread_places)
  peaks <- list()
  for (a in names(timed)) {
    fs_a <- run_sampling_hz(timed[[a]]$meta)
    partners <- spectrum_partners(timed, a)
    for (u in names(spectra[[a]])) {
      spec <- spectra[[a]][[u]]
      found <- find_peaks(spec[, .(frequency_hz, power)])
      pairs <- partner_threads(spectra, places, partners, u, spec$host[1], spec$cpu[1])
      found <- vote_on_origin(found, lapply(pairs, function(b) {
        partner <- spectra[[b$run]][[b$thread]]
        classify_peaks(found, fs_a, partner, run_sampling_hz(timed[[b$run]]$meta),
          spec$mean_count[1], partner$mean_count[1])
      }))
      b <- if (length(pairs)) pairs[[1]]$run else NULL
      found[, `:=`(share_percent = line_share_percent(power, spec$median_count[1],
        spec$max_count[1]), run = a,
        thread = spec$unit[1], host = spec$host[1], cpu = spec$cpu[1], sampling_hz = fs_a,
        partner_run = if (is.null(b)) NA_character_ else b)]
      peaks[[length(peaks) + 1]] <- found
    }
  }
  spectra <- rbindlist(lapply(names(spectra), function(a) {
    rbindlist(spectra[[a]])[, `:=`(run = a, sampling_hz = run_sampling_hz(timed[[a]]$meta))]
  }))
  peaks <- rbindlist(peaks)
  setcolorder(peaks, c("frequency_hz", "power", "origin"))
  list(peaks = peaks[order(run, thread, -power)], spectra = spectra)
}

# The partners of FTQ run a (of the FTQ runs timed) for the two-frequency
# test: the other runs of the same work and injection whose sampling
# frequency is independent of its own, the nearest in time first (the
# machine's noise changes over the hours).
spectrum_partners <- function(timed, a) {
  key <- function(r) paste(r$meta$work, format_inject(r$meta$inject))
  fs_a <- run_sampling_hz(timed[[a]]$meta)
  partners <- Filter(function(b) {
    b != a && key(timed[[b]]) == key(timed[[a]]) &&
      frequencies_independent(fs_a, run_sampling_hz(timed[[b]]$meta))
  }, names(timed))
  partners[order(abs(run_start(timed[partners]) - run_start(timed[a])))]
}

# The threads whose spectra a report computes, by position in each FTQ run:
# those the run shows in detail (summary: noise_summary's rows, in the
# threads' order), and the partner each other FTQ run's detailed threads
# would ask it for (the same host and CPU, else that host's first), so the
# two-frequency test is the one every thread would have had. An FFT per CPU
# of a 10,000-node machine would be the report's cost; this is at most
# detail_units_max a run per FTQ run.
spectrum_threads <- function(runs, summary) {
  timed <- runs_where(runs, fixed_time)
  places <- lapply(timed, thread_places)
  shown <- lapply(names(timed), function(a) detail_positions(summary[run == a]$noise_percent))
  names(shown) <- names(timed)
  lapply(setNames(names(timed), names(timed)), function(a) {
    asked <- unique(rbindlist(lapply(setdiff(names(timed), a), function(b) {
      places[[b]][shown[[b]]]
    })))
    partners <- vapply(seq_len(nrow(asked)), function(i) {
      partner_position(places[[a]], asked$host[i], asked$cpu[i])
    }, integer(1))
    sort(unique(c(shown[[a]], stats::na.omit(partners))))
  })
}

# Where each thread of a run ran: its host and CPU, in the threads' order.
thread_places <- function(run) {
  data.table(host = thread_values(run, "host", ""),
    cpu = thread_values(run, "cpu", 0))
}

# The position, in a partner run's places (thread_places), of the thread
# that one on host and cpu is compared with: the same host and CPU, else
# that host's first (another node's lines are another node's noise); NA
# when the partner run measured nothing on that host.
partner_position <- function(places, host, cpu) {
  same <- which(places$host == host)
  c(same[places$cpu[same] == cpu], same, NA_integer_)[1]
}

# The partners of thread u (its "host:cpu", on host and cpu) among the
# partner runs, one a run (partner_position; places: each run's
# thread_places, in the order of its spectra); at most `most`, the same
# CPU's first, none of a run that measured nothing on that host.
partner_threads <- function(spectra, places, partners, u, host, cpu, most = 5) {
  pairs <- lapply(partners, function(b) {
    i <- partner_position(places[[b]], host, cpu)
    if (!is.na(i)) list(run = b, thread = names(spectra[[b]])[i])
  })
  # the same CPU's first, each group in the partners' order
  pairs <- Filter(Negate(is.null), pairs)
  same_cpu <- vapply(pairs, function(b) b$thread == u, logical(1))
  utils::head(c(pairs[same_cpu], pairs[!same_cpu]), most)
}

# Each partner's verdict on each peak is a test of its own: the origin is
# the one most of them gave, of external and artifact; a tie, or none,
# is unknown (a partner that saw neither or both casts no vote). partners
# says how many runs were asked, agreeing how many gave the origin.
vote_on_origin <- function(peaks, verdicts) {
  peaks <- copy(peaks)
  if (length(verdicts) == 0 || nrow(peaks) == 0) {
    return(peaks[, `:=`(origin = rep("unknown", .N), partner_hz = rep(NA_real_, .N),
      partners = rep(length(verdicts), .N), agreeing = rep(0L, .N))][])
  }
  origins <- vapply(verdicts, function(v) v$origin, character(nrow(peaks)))
  dim(origins) <- c(nrow(peaks), length(verdicts))
  external <- rowSums(origins == "external")
  artifact <- rowSums(origins == "artifact")
  peaks[, `:=`(
    origin = ifelse(external > artifact, "external",
      ifelse(artifact > external, "artifact", "unknown")),
    partner_hz = verdicts[[1]]$partner_hz,
    partners = length(verdicts),
    agreeing = as.integer(ifelse(external == artifact, 0, pmax(external, artifact)))
  )][]
}

# When each run started (its JSON's start.utc), NA where it does not say.
run_start <- function(runs) {
  vapply(runs, function(r) {
    start <- r$meta$start
    utc <- if (is.list(start)) start$utc
    if (!is.character(utc)) return(NA_real_)
    as.numeric(as.POSIXct(utc, format = "%Y-%m-%dT%H:%M:%OSZ", tz = "UTC"))
  }, numeric(1))
}

# As --inject takes it: "period_us:duration_us", ":poisson" after a random stream's
format_inject <- function(inject) {
  if (is.null(inject)) return("none")
  sprintf("%s:%s%s", inject$period_us, inject$duration_us,
    if (identical(inject$pattern, "poisson")) ":poisson" else "")
}
