# The formulas the tests hold the kernels' figures against, as the Sequoia
# analysis (the Octave analyze and wanalyze scripts) writes them: the
# package reads the kernels' own figures, so only the tests compute them.

# (t - min) / min: how much longer than the best sample each sample took.
scaled_noise <- function(x) {
  m <- min(x)
  (x - m) / m
}

# The moments of n samples from their total and central moments m2..m4.
moments_list <- function(n, total, m2, m3, m4) {
  list(
    samples = n,
    total = total,
    scaled_noise_mean = total / n,
    scaled_noise_sd = if (n > 1) sqrt(m2 * n / (n - 1)) else NA_real_,
    kurtosis = if (m2 > 0) m4 / m2^2 else NaN,
    skewness = if (m2 > 0) m3 / m2^1.5 else NaN
  )
}

# Mean, standard deviation (n - 1, as Octave's std), and the moment
# kurtosis and skewness (m4 / m2^2, m3 / m2^1.5: a normal sample has
# kurtosis 3, not 0). A constant sample has no kurtosis or skewness: NaN.
# With freq, x holds distinct values and freq how often each occurs.
noise_moments <- function(x, freq = NULL) {
  if (!is.null(freq)) {
    n <- sum(freq)
    total <- sum(x * freq)
    d <- x - total / n
    return(moments_list(n, total, sum(freq * d^2) / n, sum(freq * d^3) / n,
      sum(freq * d^4) / n))
  }
  n <- length(x)
  total <- sum(x)
  # two vectors and dot products: every further temporary of a 10-million
  # sample run costs more than the arithmetic
  d <- x - total / n
  d2 <- d * d
  moments_list(n, total, drop(crossprod(d)) / n, drop(crossprod(d2, d)) / n,
    drop(crossprod(d2)) / n)
}

# Quantiles that were measured (type 1: the ceiling(n p)-th smallest value),
# NA without samples. A partial sort places just those few: linear in the
# samples, as fast as data.table's parallel sort of 10^7 and five times
# faster than it on the 10^4 of each of thousands of ranks.
measured_quantiles <- function(x, probs) {
  if (length(x) == 0) return(rep(NA_real_, length(probs)))
  k <- pmax(1, ceiling(probs * length(x)))
  sort.int(as.double(x), partial = unique(k))[k]
}
