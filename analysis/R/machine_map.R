# The whole machine on one page by where its nodes sit (node_locations): a
# column a unit of the largest level (a cabinet), in it a tile a node,
# grouped and outlined by the next level (its chassis), coloured by the
# share of time the node's CPUs lost. A bad cabinet is a dark column, a bad
# chassis a dark block, a bad node a dark tile: causes bigger than a node
# show as the shapes of the hardware. One tile a node, of fixed size
# whatever the machine's: 10^4 nodes are 10^4 tiles of a raster.

# nodes: a row a host with noise_percent; places: node_locations' table.
# NULL where the nodes are not placed.
machine_map_data <- function(nodes, places) {
  levels <- location_levels(places)
  if (!length(levels)) return(NULL)
  d <- places[nodes, on = "host"]
  column <- d[[levels[1]]]
  block <- if (length(levels) > 1) d[[levels[2]]] else column
  d <- data.table(host = d$host, column = column, block = block,
    noise_percent = d$noise_percent)[!is.na(column)]
  if (uniqueN(d$column) < 2 && uniqueN(d$block) < 2) return(NULL)
  d[, column := factor(column, levels = natural_order(unique(column)))]
  d <- d[order(column, match(block, natural_order(unique(block))), natural_rank(host))]
  d[, row := seq_len(.N), by = column]
  d[]
}

# Names in the order a person counts them: x2 before x10
natural_order <- function(x) x[order(natural_rank(x))]

natural_rank <- function(x) {
  digits <- regmatches(x, gregexpr("[0-9]+", x))
  key <- vapply(digits, function(d) paste(sprintf("%012s", d), collapse = ""), "")
  order(order(gsub("[0-9]+", "0", x), key, x))
}

plot_machine_map <- function(d, levels, title) {
  blocks <- d[, .(ymin = min(row) - 0.5, ymax = max(row) + 0.5), by = .(column, block)]
  blocks[, x := as.integer(column)]
  columns <- levels(d$column)
  every <- max(1L, ceiling(length(columns) / 40))
  ggplot2::ggplot(d, ggplot2::aes(as.integer(column), row, fill = noise_percent)) +
    ggplot2::geom_raster() +
    ggplot2::geom_rect(data = blocks, ggplot2::aes(xmin = x - 0.5, xmax = x + 0.5, ymin = ymin,
      ymax = ymax), inherit.aes = FALSE, fill = NA, colour = "white", linewidth = 0.3) +
    ggplot2::scale_fill_viridis_c(option = "magma", trans = "sqrt", direction = -1) +
    ggplot2::scale_x_continuous(breaks = seq(1, length(columns), by = every),
      labels = columns[seq(1, length(columns), by = every)], expand = c(0, 0)) +
    ggplot2::scale_y_reverse(expand = c(0, 0)) +
    ggplot2::labs(title = title, x = levels[1], fill = "noise %",
      y = if (length(levels) > 1) sprintf("nodes by %s, outlined", levels[2]) else "nodes") +
    theme_noise() +
    ggplot2::theme(axis.text.x = ggplot2::element_text(angle = 90, vjust = 0.5, hjust = 1),
      axis.text.y = ggplot2::element_blank(), axis.ticks.y = ggplot2::element_blank(),
      panel.grid = ggplot2::element_blank())
}

# The map's plot of a run, with its caption; NULL where the nodes are not
# placed. summary: the run's rows (a row a rank).
machine_map_plot <- function(dir, file, summary, places, label, width = 6.5, height = 4.5) {
  nodes <- summary[, .(noise_percent = mean(noise_percent, na.rm = TRUE)), by = host]
  d <- machine_map_data(nodes, places)
  if (is.null(d)) return(NULL)
  levels <- location_levels(places)
  unplaced <- nrow(nodes) - nrow(d)
  caption <- paste0(label, ": every node by where it sits, the share of its time (%, colour) ",
    "its CPUs lost; a column a ", levels[1],
    if (length(levels) > 1) sprintf(", a white outline a %s", levels[2]), ", a tile a node (",
    format_number(nrow(d)), " nodes",
    if (unplaced > 0) sprintf(", %s not placed and not shown", format_number(unplaced)),
    "). A dark column is a bad ", levels[1],
    if (length(levels) > 1) sprintf(", a dark block a bad %s", levels[2]),
    ", a dark tile a bad node; outliers.csv names them.")
  setNames(save_plot(plot_machine_map(d, levels, plot_title(label, inches = width)), dir,
    file, width = width, height = height), caption)
}
