# Where the time went, by the length of what took it: every participant's
# loss on fixed log buckets, summed by the kernel itself (the JSON's
# loss_histogram: src/lib/base/tails.h defines the buckets and the loss).
# The whole run's distribution without reading a sample, whatever the ranks:
# short events every few ms (timer ticks, interrupts) against rare long ones
# (a daemon's wake-up, a stall), which a mean mixes.

# One row per run and bucket that holds a sample: the bucket's bounds (us),
# its samples (selfish: its detours) and how often per core-hour, and the
# share of the measured CPU time they lost. A run without the histogram (a
# streamed one) has no rows.
loss_by_length <- function(runs) {
  rbindlist(lapply(names(runs), function(name) {
    h <- runs[[name]]$meta$loss_histogram
    if (is.null(h)) return(NULL)
    samples <- as.numeric(unlist(h$samples))
    lost_ns <- as.numeric(unlist(h$lost_ns))
    edges_us <- c(0, as.numeric(unlist(h$edges_ns)) / 1e3, Inf)
    k <- seq_along(samples)
    data.table(run = name, kernel = runs[[name]]$kernel, participants = h$participants,
      from_us = edges_us[k], to_us = edges_us[k + 1], samples = samples,
      per_core_hour = samples / (h$seconds / 3600),
      lost_percent = 100 * lost_ns / (h$seconds * 1e9))[samples > 0]
  }))
}

# "below 100 ns", "100 ns to 200 ns", "1 ms to 2 ms", "10 s and beyond": a
# bucket as a reader says it
length_label <- function(from_us, to_us) {
  ifelse(is.infinite(to_us), paste(duration_label(from_us), "and beyond"),
    ifelse(from_us == 0, paste("below", duration_label(to_us)),
      paste(duration_label(from_us), "to", duration_label(to_us))))
}

duration_label <- function(us) {
  unit <- ifelse(us >= 1e6, "s", ifelse(us >= 1e3, "ms", ifelse(us >= 1, "us", "ns")))
  scale <- c(s = 1e6, ms = 1e3, us = 1, ns = 1e-3)[unit]
  paste(format(us / scale, trim = TRUE, drop0trailing = TRUE), unit)
}

# The share of the time lost (y) by the length of the samples' loss (x),
# a bar per run (its label in run: with_labels), a panel per kernel; the
# samples that lost less than 100 ns lost nothing to show.
plot_loss_by_length <- function(lengths, title) {
  d <- copy(lengths)[from_us > 0]
  d[, kernel := vapply(kernel, kernel_label, "")]
  d[, bucket := factor(length_label(from_us, to_us),
    levels = unique(length_label(from_us, to_us)[order(from_us)]))]
  ggplot2::ggplot(d, ggplot2::aes(bucket, lost_percent, fill = run)) +
    ggplot2::geom_col(position = ggplot2::position_dodge(preserve = "single")) +
    ggplot2::facet_wrap(~kernel, ncol = 1, scales = "free_y") +
    ggplot2::labs(title = title, x = "what a sample lost", y = "share of the CPU time (%)",
      fill = NULL) +
    theme_noise() +
    ggplot2::theme(axis.text.x = ggplot2::element_text(angle = 30, hjust = 1),
      legend.position = "bottom", legend.direction = "vertical")
}

# Inches: a panel per kernel, a legend line per run
loss_by_length_height <- function(lengths) {
  1.5 + 2.5 * uniqueN(lengths$kernel) + 0.2 * uniqueN(lengths$run)
}
