# The report's plots. Each takes tables built by the other files and
# returns a ggplot; save_plot() writes it. Runs of millions of samples are
# reduced before plotting (per-bin maxima, never a random subset: the
# largest detours are what a noise plot must not drop).

theme_noise <- function() {
  ggplot2::theme_bw(base_size = 10) +
    ggplot2::theme(strip.background = ggplot2::element_rect(fill = "grey92"))
}

# A plot's title of a run's label and what the plot shows, broken into
# lines that fit a plot `inches` wide (about 10 characters an inch at
# theme_noise's size): a label names its hosts, and a machine's are long.
plot_title <- function(label, what = NULL, inches = 9) {
  text <- if (is.null(what)) label else paste0(label, ": ", what)
  paste(strwrap(text, width = floor(10 * inches)), collapse = "\n")
}

save_plot <- function(plot, dir, name, width = 9, height = 5) {
  file <- file.path(dir, paste0(gsub("[^A-Za-z0-9_.-]", "_", name), ".png"))
  ggplot2::ggsave(file, plot, width = width, height = height, dpi = 100,
    device = grDevices::png, type = "cairo")
  basename(file)
}

# A participant by where it ran: host:cpu, and its rank.
unit_label <- function(unit, cpu, host) sprintf("%s:%s (rank %s)", host, cpu, unit)

# Bins of 1/20 decade from `resolution` up: scaled noise spans from the
# timer's resolution (a few 1e-4 of a 100 us sample) to stalls of 1e3, and
# equal-width bins would put all but the tail into the first one. Samples
# within the resolution of the minimum go into the first bin.
log_breaks <- function(lowest, highest, per_decade = 20) {
  lo <- floor(log10(lowest) * per_decade) / per_decade
  hi <- ceiling(log10(max(highest, lowest * 10)) * per_decade) / per_decade
  10^seq(lo, hi, by = 1 / per_decade)
}

# Counts of x per label in the bins between breaks, empty bins left out (a
# log count axis has no place for them).
bin_counts <- function(x, label, breaks) {
  bin <- findInterval(x, breaks, rightmost.closed = TRUE, all.inside = TRUE)
  data.table(label = label, bin = bin)[, .(n = .N), by = .(label, bin)][
    , `:=`(lo = breaks[bin], hi = breaks[bin + 1])][]
}

plot_bins <- function(bins) {
  ggplot2::ggplot(bins) +
    ggplot2::geom_rect(ggplot2::aes(xmin = lo, xmax = hi, ymin = 0.8, ymax = n),
      fill = "steelblue4") +
    ggplot2::scale_y_log10(labels = format_number)
}

# At most `bins` points per thread: the largest y of each run of consecutive
# rows (rows in x order), at the largest x of the run.
reduce_max <- function(d, x, y, bins = 2000) {
  d <- d[, .(unit, cpu, host, x = get(x), y = get(y))]
  d[, bin := floor((seq_len(.N) - 1) / ceiling(.N / bins)), by = .(host, unit)]
  d <- d[, .(x = max(x), y = max(y)), by = .(unit, cpu, host, bin)]
  setnames(d, c("x", "y"), c(x, y))[]
}

plot_spectrum <- function(spectra, peaks, title) {
  # a bin of exactly no power (noiseless counts) has no place on a log axis
  d <- reduce_max(spectra, "frequency_hz", "power")[power > 0][, label := unit_label(unit, cpu, host)]
  p <- ggplot2::ggplot(d, ggplot2::aes(frequency_hz, power)) +
    ggplot2::geom_line(linewidth = 0.3, colour = "grey30") +
    ggplot2::scale_y_log10(labels = format_number) +
    ggplot2::facet_wrap(~label, ncol = 1) +
    ggplot2::labs(title = title, x = "frequency (Hz)", y = "power (counts^2)",
      colour = "peak origin") +
    theme_noise()
  if (nrow(peaks)) {
    p <- p + ggplot2::geom_point(
      data = peaks[, .(frequency_hz, power, origin, label = unit_label(thread, cpu, host))],
      ggplot2::aes(colour = origin), size = 1.5
    ) + ggplot2::scale_colour_manual(values = c(external = "firebrick", artifact = "darkorange",
      unknown = "grey50"), drop = FALSE)
  }
  p
}

# A row per CPU; beyond detail_units_max rows, sorted by the noise each
# lost over the run (the noisiest on top) and, beyond heatmap_rows_named,
# unnamed: a picture of the whole run whose bad rows stand out.
heatmap_rows_named <- 30

# Tiles coloured by the share of time lost (noise_percent), at x in a row
# each (in the order the caller sorted them, a factor whose last level is
# drawn on top); beyond heatmap_rows_named rows unnamed, the axis saying how
# many `rows_are`, and beyond tile_rows_max in bands (tile_bands).
plot_loss_tiles <- function(d, x_label, rows_are, title, rows = uniqueN(d$row)) {
  banded <- tile_bands(d)
  p <- ggplot2::ggplot(banded, ggplot2::aes(x, row, fill = noise_percent)) +
    ggplot2::geom_tile() +
    ggplot2::scale_fill_viridis_c(option = "magma", trans = "sqrt", direction = -1) +
    ggplot2::labs(title = title, x = x_label, y = NULL, fill = "noise %") +
    theme_noise()
  if (rows > heatmap_rows_named) {
    axis <- if (rows > tile_rows_max) {
      sprintf(paste("%s %s: the %d noisiest on top, a row each; below, the other %s in %d",
        "bands, each their mean"), format_number(rows), rows_are, tile_rows_single,
        format_number(rows - tile_rows_single), tile_rows_max - tile_rows_single)
    } else {
      sprintf("%s %s, the noisiest on top", format_number(rows), rows_are)
    }
    p <- p + ggplot2::labs(y = axis) +
      ggplot2::theme(axis.text.y = ggplot2::element_blank(),
        axis.ticks.y = ggplot2::element_blank())
  }
  p
}

# A plot's rows beyond tile_rows_max would each get less than a pixel and
# cost ggplot a tile each (a whole machine's CPUs: millions): the noisiest
# tile_rows_single keep a row each, and the others, in their order, are
# averaged in as many bands of equal size as make tile_rows_max rows. The
# rows are d$row's levels, the noisiest last; a band's value at each x is
# the mean over its rows.
tile_rows_max <- 256
tile_rows_single <- 64

tile_bands <- function(d) {
  if (!is.factor(d$row) || nlevels(d$row) <= tile_rows_max) return(d)
  band_of <- tile_band_of(nlevels(d$row))
  names <- tile_band_names(tail(levels(d$row), tile_rows_single))
  # one integer a (band, x) cell: a whole machine's tiles are millions, and
  # data.table groups one integer column several times faster than two
  xs <- sort(unique(d$x))
  cell <- (as.integer(band_of)[as.integer(d$row)] - 1L) * length(xs) + match(d$x, xs)
  out <- data.table(cell = cell, v = d$noise_percent)[, .(noise_percent = mean(v, na.rm = TRUE)),
    keyby = cell]
  out[, `:=`(x = xs[(cell - 1L) %% length(xs) + 1L],
    row = structure((cell - 1L) %/% length(xs) + 1L, levels = names, class = "factor"))]
  out[, .(x, noise_percent, row)]
}

# The band of each of `rows` rows in their order, the noisiest last, which
# keep a row each (tile_bands), and the bands' names, the single rows' labels
# (`single`) last.
tile_band_of <- function(rows) {
  rest <- rows - tile_rows_single
  bands <- tile_rows_max - tile_rows_single
  c(ceiling(seq_len(rest) * bands / rest), bands + seq_len(tile_rows_single))
}

tile_band_names <- function(single) {
  c(sprintf("band %d", seq_len(tile_rows_max - tile_rows_single)), single)
}

heatmap_height <- function(rows) 1.5 + 0.4 * min(rows, heatmap_rows_named)

