# A run's ranks' summaries, whatever holds them: the entries of its JSON
# (ranks[], lists: a run of up to 4,096 ranks) or its nodes' ranks tables
# (run$ranks, a data.table a row a rank, a column a member by its path:
# read_ranks_table). Every part of the report asks for a member of every
# rank at once by its path ("stats.min", "tails.p99_us") and gets a vector,
# so that of a million ranks it holds their columns, never a million lists.

# How many ranks the run describes
rank_count <- function(run) {
  if (!is.null(run$ranks)) nrow(run$ranks) else length(run$meta$ranks)
}

# Each rank's member at `path` (keys joined by "."), `default` where a rank
# has none; a vector of default's type.
rank_values <- function(run, path, default = NA_real_) {
  if (!is.null(run$ranks)) {
    v <- run$ranks[[path]]
    if (is.null(v)) return(rep(default, nrow(run$ranks)))
    v <- as.vector(v, typeof(default))
    if (!is.na(default)) v[is.na(v)] <- default
    return(v)
  }
  keys <- strsplit(path, ".", fixed = TRUE)[[1]]
  vapply(run$meta$ranks, function(e) {
    for (k in keys) {
      e <- e[[k]]
      if (is.null(e)) return(default)
    }
    as.vector(e, typeof(default))
  }, default, USE.NAMES = FALSE)
}

# Each rank's array of numbers at `path` (stretches.n, tails.histogram.samples)
# as a matrix, a row a rank, a column a place, NA past a rank's last.
rank_matrix <- function(run, path) {
  if (!is.null(run$ranks)) {
    columns <- rank_columns(run, path)
    if (!length(columns)) return(matrix(NA_real_, nrow(run$ranks), 0))
    return(matrix(as.numeric(unlist(columns, use.names = FALSE)), nrow(run$ranks)))
  }
  keys <- strsplit(path, ".", fixed = TRUE)[[1]]
  each <- lapply(run$meta$ranks, function(e) {
    for (k in keys) e <- e[[k]]
    # a null in an array (JSON's NaN) keeps its place
    if (is.list(e)) vapply(e, function(v) if (is.null(v)) NA_real_ else as.numeric(v), 0) else
      as.numeric(e)
  })
  width <- max(0L, lengths(each))
  m <- matrix(NA_real_, length(each), width)
  for (i in seq_along(each)) m[i, seq_along(each[[i]])] <- each[[i]]
  m
}

# Each rank's array of numbers at `path` as a list of vectors, one a place
# (a vector of a value a rank, NA past a rank's last): a table's own
# columns, no copy, which unlist() makes one long vector place by place.
# Of the ranks at positions `rows` only, where given.
rank_columns <- function(run, path, rows = NULL) {
  if (is.null(run$ranks)) {
    m <- rank_matrix(run, path)
    if (!is.null(rows)) m <- m[rows, , drop = FALSE]
    return(lapply(seq_len(ncol(m)), function(k) m[, k]))
  }
  if (path %in% deferred_arrays && !is.null(run$deferred)) {
    return(deferred_columns(run, path, rows %||% seq_len(nrow(run$ranks)))[[1]])
  }
  columns <- lapply(rank_column_names(run, path), function(k) run$ranks[[k]])
  if (is.null(rows)) columns else lapply(columns, `[`, rows)
}

# rank_columns of several arrays, of the ranks at positions `rows`: a list
# an array. Deferred arrays are read together, each file once.
rank_arrays <- function(run, paths, rows) {
  if (all(paths %in% deferred_arrays) && !is.null(run$ranks) && !is.null(run$deferred)) {
    return(deferred_columns(run, paths, rows))
  }
  lapply(paths, function(p) rank_columns(run, p, rows))
}

# The ranks table's columns of the array at `path`, by place: path.1, path.2, ...
# (of the names `of`: the table's own unless given)
rank_column_names <- function(run, path, of = names(run$ranks)) {
  columns <- grep(paste0("^", gsub(".", "\\.", path, fixed = TRUE), "\\.[0-9]+$"), of,
    value = TRUE)
  columns[order(as.integer(sub(".*\\.", "", columns)))]
}

# The arrays that read_run leaves in a run's ranks tables (read_ranks_table's
# defer): each rank's 100 stretches' n and sum, 800 of the 1,100 bytes a
# rank's row takes in memory (a million ranks: 0.8 GB), which the report
# reads twice, a batch of hosts at a time (stretch_yardsticks,
# heatmap_tiles).
deferred_arrays <- c("stretches.n", "stretches.sum")

# rank_columns of deferred arrays (`paths`), of the ranks at positions
# `rows`, a list an array: the files they are in read again, a file at a
# time, those arrays' columns only.
deferred_columns <- function(run, paths, rows) {
  d <- run$deferred
  file <- run$ranks$.file[rows]
  files <- unique(file)
  # the columns of these files only: a million ranks' 8,192 files name 1.6
  # million, a batch's 64 files 12,800
  every <- unique(unlist(d$columns[files]))
  names <- lapply(paths, rank_column_names, run = run, of = every)
  wanted <- unlist(names)
  # the files' tables bound into one (a column a file lacks NA), and each
  # rank's row in it: its file's first row's place, and its own in its file
  read <- lapply(files, function(f) {
    tryCatch(fread(d$paths[f], select = intersect(wanted, d$columns[[f]]), sep = ",",
      header = TRUE, integer64 = "double", showProgress = FALSE),
      error = function(e) stop_input(d$paths[f], paste("not a ranks table:", conditionMessage(e))))
  })
  starts <- cumsum(c(0, vapply(read, nrow, 0L)))[match(file, files)]
  all <- rbindlist(read, use.names = TRUE, fill = TRUE)
  at <- starts + run$ranks$.row[rows]
  out <- lapply(wanted, function(k) {
    if (is.null(all[[k]])) rep(NA_real_, length(rows)) else as.numeric(all[[k]][at])
  })
  of <- rep(seq_along(paths), lengths(names))
  lapply(seq_along(paths), function(p) out[of == p])
}

# The ranks' entries as lists (all, or those at positions `which`): a
# table's rows made entries again, for what reads a rank's nested members
# (its causes, its spectrum's lines) and costs a list a rank.
rank_entries <- function(run, which = NULL) {
  if (is.null(run$ranks)) {
    return(if (is.null(which)) run$meta$ranks else run$meta$ranks[which])
  }
  rows <- if (is.null(which)) run$ranks else run$ranks[which]
  table_entries(rows)
}

# A ranks table's rows as nested lists: each column's path made keys again,
# an array's places (keys that are numbers) a list, an empty field left out.
table_entries <- function(rows) {
  # a run's own marks (.file, .row: where a row was read) are no member
  rows <- rows[, !startsWith(names(rows), "."), with = FALSE]
  paths <- strsplit(names(rows), ".", fixed = TRUE)
  build <- function(values, at, depth) {
    keys <- vapply(paths[at], `[`, "", depth)
    out <- list()
    for (key in unique(keys)) {
      mine <- at[keys == key]
      v <- if (length(mine) == 1 && length(paths[[mine]]) == depth) {
        values[[mine]]
      } else {
        build(values, mine, depth + 1)
      }
      if (length(v) == 0 || (length(v) == 1 && !is.list(v) && is.na(v))) next
      out[[key]] <- v
    }
    if (length(out) && all(grepl("^[0-9]+$", names(out)))) out <- unname(out)
    out
  }
  lapply(seq_len(nrow(rows)), function(i) {
    build(lapply(rows, `[[`, i), seq_along(paths), 1)
  })
}
