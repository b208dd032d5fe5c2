# Readers for what the noisebench kernels write: the JSON run description
# (PREFIX.json) and the per-thread or per-rank data files it lists. Every
# data file is checked against its JSON (line count, fields, numbers), so a
# truncated or mismatched file stops the analysis with one line that names
# the file and the line, before anything is written.

input_error <- function(file, line, what) {
  where <- if (is.na(line)) file else paste0(file, ":", line)
  structure(
    class = c("noisebench_input_error", "error", "condition"),
    list(message = paste0(where, ": ", what), call = NULL)
  )
}

#' @rdname read_results
#' @export
stop_input <- function(file, what, line = NA) stop(input_error(file, line, what))

# Kernel runs are the JSON files with a "kernel" field; noise-info's
# machine.json has none and describes the machine instead. A run's node
# files (PREFIX_nodeK.json) are read with the run (read_node_ranks).
find_runs <- function(results_dir) {
  if (!dir.exists(results_dir)) {
    stop_input(results_dir, "no such directory")
  }
  # the reports' own directories below results_dir left out, not a results
  # directory that itself sits under one named report
  files <- list.files(results_dir, "\\.json$", recursive = TRUE)
  files <- files[!grepl("(^|/)report[^/]*/", files) & !grepl(node_file_pattern(), files)]
  sort(file.path(results_dir, files))
}

# A node file's name, whatever its run's prefix (kernels.json's node_files)
node_file_pattern <- function() {
  name <- sub("{prefix}", "", noisebench_kernels$node_files$file_name, fixed = TRUE)
  paste0(sub("{node}", "[0-9]+", gsub(".", "\\.", name, fixed = TRUE), fixed = TRUE), "$")
}

# The ranks' entries of a run whose PREFIX.json lists node files instead of
# holding them (more ranks than one file should describe, or --node-files):
# each node's, in the order of the list (the nodes' first ranks', as
# machines[]); of the nodes whose host matches `hosts` only, the others'
# files left unread (read_run keeps the matching ranks of those it reads).
read_node_ranks <- function(meta, json_path, hosts = NULL) {
  names <- unlist(meta$node_files)
  node_hosts <- machine_hosts(meta)
  if (!is.null(hosts) && length(node_hosts) == length(names)) {
    names <- names[on_hosts(node_hosts, hosts)]
  }
  unlist(lapply(names, function(name) {
    path <- file.path(dirname(json_path), name)
    if (!file.exists(path)) stop_input(path, "missing (the run's JSON lists it)")
    lapply(json_field(read_json_file(path), "ranks", path), compact_entry)
  }), recursive = FALSE)
}

# The fewest ranks tables a worker of read_ranks_table reads: a fork costs
# about as much as reading a few.
ranks_tables_a_worker <- 16

# A run's ranks as one table, a row a rank, from its nodes' ranks tables
# (kernels.json's node_files.ranks_suffix: each rank's entry flattened,
# stats.min, stretches.n.1, ...), read with fread: 10^6 ranks' summaries at
# the speed of the disk, without the 9 KB a rank of their entries parsed as
# lists. Of the nodes whose host matches `hosts` only, as read_node_ranks.
# defer: the arrays of deferred_arrays left in the files, to be read again a
# batch of ranks at a time (rank_columns), each row marked with its file
# (.file, its place in the table's attribute "deferred": list(paths,
# columns, the deferred columns a file)) and its row in it (.row).
#' @rdname read_results
#' @export
read_ranks_table <- function(json_path, hosts = NULL, meta = read_json_file(json_path),
                             defer = FALSE, columns = NULL) {
  names <- unlist(meta$ranks_files)
  if (is.null(names)) {
    stop_input(json_path, paste("no ranks_files: the run's ranks are in its JSON (at most",
      noisebench_kernels$node_files$inline_ranks, "ranks, and no --node-files)"))
  }
  node_hosts <- machine_hosts(meta)
  if (!is.null(hosts) && length(node_hosts) == length(names)) {
    names <- names[on_hosts(node_hosts, hosts)]
  }
  first <- unlist(noisebench_kernels$node_files$ranks_first_columns)
  paths <- file.path(dirname(json_path), names)
  read_table <- function(k) {
    path <- paths[k]
    if (!file.exists(path)) stop_input(path, "missing (the run's JSON lists it)")
    header <- if (defer || !is.null(columns)) {
      strsplit(readLines(path, n = 1, warn = FALSE), ",", fixed = TRUE)[[1]]
    }
    # the deferred columns not made into columns: dropped by name, from the header
    later <- if (defer) header[sub("\\.[0-9]+$", "", header) %in% deferred_arrays]
    # or only the columns asked for (and the first ones)
    keep <- if (!is.null(columns)) header[header %in% first | grepl(columns, header)]
    d <- tryCatch(fread(path, sep = ",", header = TRUE, integer64 = "double",
      drop = if (length(later) && is.null(keep)) later, select = keep, showProgress = FALSE),
      error = function(e) stop_input(path, paste("not a ranks table:", conditionMessage(e))))
    if (!identical(utils::head(names(d), length(first)), first)) {
      stop_input(path, sprintf("not a ranks table: its header starts %s, not %s",
        paste(utils::head(names(d), length(first)), collapse = ","),
        paste(first, collapse = ",")), 1)
    }
    if (defer) d[, `:=`(.file = k, .row = seq_len(.N))]
    list(table = d, deferred = later)
  }
  # the files in as many runs of them as CPUs, each run read by a worker of
  # its own (lapply_cores) and bound there: a million ranks' 8,192 tables
  # are read in two thirds of the time on 2 CPUs, and what comes back is
  # the tables alone
  runs <- split(seq_along(paths), ceiling(seq_along(paths) /
    max(ranks_tables_a_worker, ceiling(length(paths) / getDTthreads()))))
  parts <- lapply_cores(runs, function(ks) {
    read <- lapply(ks, read_table)
    list(table = rbindlist(lapply(read, `[[`, "table"), use.names = TRUE, fill = TRUE),
      deferred = lapply(read, `[[`, "deferred"))
  })
  out <- rbindlist(lapply(parts, `[[`, "table"), use.names = TRUE, fill = TRUE)
  deferred <- unlist(lapply(parts, `[[`, "deferred"), recursive = FALSE)
  if (defer) setattr(out, "deferred", list(paths = paths, columns = deferred))
  if (is.null(hosts) && !is.null(meta$ranks_in_run) && nrow(out) != meta$ranks_in_run) {
    stop_input(json_path, sprintf("its ranks tables hold %d ranks, the run had %d (truncated?)",
      nrow(out), as.integer(meta$ranks_in_run)))
  }
  out[]
}

# The figures the kernels reduced over every rank of a run, of the kept
# ranks only (a report of some hosts): the loss histogram summed again from
# the ranks' own, P-SNAP's iteration histogram marked to be counted from the
# kept ranks' files (psnap_histogram). Returns the run's description.
kept_ranks_reductions <- function(run) {
  meta <- run$meta
  if (!is.null(meta$loss_histogram)) {
    seconds <- rank_values(run, "tails.loss.seconds")
    measured <- !is.na(seconds)
    sum_of <- function(field) {
      m <- rank_matrix(run, paste0("tails.histogram.", field))[measured, , drop = FALSE]
      colSums(m, na.rm = TRUE)
    }
    meta$loss_histogram <- list(participants = sum(measured), seconds = sum(seconds[measured]),
      edges_ns = meta$loss_histogram$edges_ns, samples = sum_of("samples"),
      lost_ns = sum_of("lost_ns"))
  }
  if (!is.null(meta$iteration_histogram)) meta$iteration_histogram$counted_by <- "files"
  meta
}

# A rank's entry with its long arrays of numbers (the stretches', the loss
# histogram's) as numeric vectors: parsed, each number is a list element of
# its own, 56 bytes, and they were 17 of the entry's 21 KB.
compact_entry <- function(u) {
  numbers <- function(x) if (is.list(x)) as.numeric(unlist(x)) else x
  if (!is.null(u$stretches)) {
    u$stretches$n <- numbers(u$stretches$n)
    u$stretches$sum <- numbers(u$stretches$sum)
  }
  if (!is.null(u$tails$histogram)) {
    u$tails$histogram$samples <- numbers(u$tails$histogram$samples)
    u$tails$histogram$lost_ns <- numbers(u$tails$histogram$lost_ns)
  }
  u
}

machine_hosts <- function(meta) {
  vapply(meta$machines %||% list(meta$machine), function(m) m$hostname %||% NA_character_, "")
}

# Which of these host names a report of the hosts matching the regular
# expression `hosts` (report.R --hosts) covers
on_hosts <- function(names, hosts) !is.na(names) & grepl(hosts, names)

#' @rdname read_results
#' @export
read_json_file <- function(path, nan = FALSE) {
  text <- readChar(path, file.size(path), useBytes = TRUE)
  # the first character that is not a space ends the search: trimws would
  # copy a node file's megabytes
  if (length(text) == 0 || !grepl("[^[:space:]]", text, useBytes = TRUE)) {
    stop_input(path, "empty JSON file")
  }
  # nan: a bare NaN or Infinity (Python's json, ReFrame's report) as null
  if (nan) {
    text <- gsub("([\\[,:]\\s*)-?(?:NaN|Infinity)(\\s*[\\],}])", "\\1null\\2", text,
      perl = TRUE)
  }
  tryCatch(
    jsonlite::fromJSON(text, simplifyVector = FALSE),
    error = function(e) {
      # jsonlite's message quotes the text around the error over several lines
      stop_input(path, paste("not valid JSON:", sub("\n.*", "", conditionMessage(e))))
    }
  )
}

# Reads a whitespace-separated file of `columns` numeric columns and checks
# it holds `expected_rows` complete lines of numbers. Columns are doubles:
# integer sums of millions of ticks would overflow, and converting afterwards
# costs a copy. `classes = "integer"` is for small whole numbers (FTQ
# counts): half the memory, and a fresh process pays for each page it fills;
# a value that is not one makes the column double.
# range: c(offset, bytes), a rank's part of its node's data file (the
# catalogue's node_files), read as a file of its own would be; errors name
# the file and the range, their lines counted from its start.
read_numbers <- function(path, columns, expected_rows, classes = "double", range = NULL) {
  last <- check_file_end(path, expected_rows, range)
  input <- if (is.null(range)) path else rawToChar(read_range(path, range))
  path <- range_label(path, range)
  if (is.null(last)) {
    return(as.data.table(setNames(rep(list(numeric()), length(columns)), columns)))
  }
  dt <- fread_numbers(input, classes)
  # a value past the largest integer makes an integer column integer64
  # (data.table 1.14, whatever integer64 = says), which bit64 would be needed
  # to read: read the file again as doubles
  if (any(vapply(dt, inherits, logical(1), "integer64"))) dt <- fread_numbers(input, "double")
  if (ncol(dt) != length(columns)) {
    bad <- which(rowSums(!is.na(dt)) != length(columns))[1]
    stop_input(path, sprintf("%d fields, expected %d (%s)", sum(!is.na(unlist(dt[bad]))),
      length(columns), paste(columns, collapse = " ")), bad)
  }
  setnames(dt, columns)
  for (col in columns) {
    values <- dt[[col]]
    if (!is.numeric(values)) {
      numbers <- suppressWarnings(as.numeric(values))
      bad <- which(is.na(numbers))[1]
      stop_input(path, sprintf("'%s' is not a number", values[bad]), bad)
    }
    if (anyNA(values)) {
      bad <- which(is.na(values))[1]
      stop_input(path, sprintf("%d fields, expected %d (%s)", sum(!is.na(unlist(dt[bad]))),
        length(columns), paste(columns, collapse = " ")), bad)
    }
  }
  if (last != as.raw(10)) {
    stop_input(path, "cut short (no newline at the end: truncated?)", nrow(dt))
  }
  if (nrow(dt) != expected_rows) {
    stop_input(path, sprintf("%d lines, the JSON says %d%s", nrow(dt), expected_rows,
      if (nrow(dt) < expected_rows) " (truncated?)" else ""))
  }
  dt
}

# What a data file's size says without reading it: that it is there, and
# empty only if it should be. Returns its last byte (NULL when empty), which
# is a newline unless the file was cut short. range: as read_numbers'.
check_file_end <- function(path, expected_rows, range = NULL) {
  if (!file.exists(path)) {
    stop_input(path, "missing (the run's JSON lists it)")
  }
  size <- file.size(path)
  if (!is.null(range) && size < range[1] + range[2]) {
    stop_input(path, sprintf("%.0f bytes, but a rank's data end at byte %.0f (truncated?)",
      size, range[1] + range[2]))
  }
  end <- if (is.null(range)) size else range[1] + range[2]
  if (end == 0 || (!is.null(range) && range[2] == 0)) {
    if (expected_rows == 0) return(NULL)
    stop_input(range_label(path, range), sprintf("empty, the JSON says %d lines", expected_rows))
  }
  read_range(path, c(end - 1, 1))
}

# bytes [offset, offset + bytes) of a file: range = c(offset, bytes)
read_range <- function(path, range) {
  con <- file(path, "rb")
  on.exit(close(con))
  seek(con, range[1])
  readBin(con, "raw", range[2])
}

range_label <- function(path, range) {
  if (is.null(range)) return(path)
  sprintf("%s (bytes %.0f-%.0f)", path, range[1], range[1] + range[2])
}

# "bumped to" warnings are the fields read_numbers finds not to be numbers
# input: a file's path, or its text (a range of it)
fread_numbers <- function(input, classes) {
  suppressWarnings(data.table::fread(
    input = input,
    header = FALSE, sep = " ", fill = TRUE, colClasses = classes, integer64 = "double",
    blank.lines.skip = FALSE, showProgress = FALSE
  ))
}

json_field <- function(x, name, path) {
  if (is.null(x[[name]])) stop_input(path, sprintf("no \"%s\" in the run description", name))
  x[[name]]
}

# One run: its description, and for each rank (a thread, or an MPI process)
# an environment of its number (unit), CPU, host, tick rate, samples (data,
# a data.table of numeric columns) and their value_table (table). Units stay
# apart: binding millions of rows into one table would cost more than
# reading them.
# samples = "read" reads and checks every rank's files now; "when_used"
# reads a rank's when something first asks for its data or table (the
# report: of a run of thousands of ranks it reads those it shows in detail
# or models, the rest of the report coming from the ranks' own summaries in
# the JSON), having checked now only that each file is there and whole to
# its last line.
# hosts: a regular expression; the run of the ranks on the hosts matching
# it only (NULL when none does).
#' @rdname read_results
#' @export
read_run <- function(json_path, samples = c("read", "when_used"),
                     meta = read_json_file(json_path), hosts = NULL) {
  samples <- match.arg(samples)
  kernel <- json_field(meta, "kernel", json_path)
  info <- kernel_info(kernel, json_path)
  dir <- dirname(json_path)
  host <- meta$machine$hostname %||% NA_character_
  ranks <- NULL
  # [[ ]]: `$` would take "ranks_in_run" for a "ranks" not there
  if (!is.null(meta[["ranks_files"]])) {
    ranks <- read_ranks_table(json_path, hosts, meta, defer = TRUE)
  } else if (!is.null(meta[["node_files"]])) {
    meta[["ranks"]] <- read_node_ranks(meta, json_path, hosts) %||% list()
  }
  run <- list(path = json_path, name = sub("\\.json$", "", json_path), kernel = kernel,
    meta = meta, ranks = ranks, deferred = attr(ranks, "deferred"))
  if (!is.null(hosts)) {
    kept <- on_hosts(rank_values(run, "host", host), hosts)
    if (!any(kept)) return(NULL)
    if (!is.null(meta$machines)) {
      run$meta$machines <- meta$machines[on_hosts(machine_hosts(meta), hosts)]
    }
    run <- keep_ranks(run, which(kept))
    if (!all(kept) || rank_count(run) < (meta$ranks_in_run %||% rank_count(run))) {
      run$meta <- kept_ranks_reductions(run)
    }
  }
  if (is.null(run$ranks)) run$meta[["ranks"]] <- lapply(run$meta[["ranks"]], compact_entry)
  n <- rank_count(run)
  if (n == 0) stop_input(json_path, "no ranks in the run description")
  files <- rank_files(run, json_path)
  if (ncol(files) == 0) {
    stop_input(json_path, "samples went to stdout (-s): no data files to analyse")
  }
  unit <- rank_values(run, "rank", NA_integer_)
  cpu <- rank_values(run, "cpu", NA_integer_)
  hosts_of <- rank_values(run, "host", host)
  # each host's own tick (MPI runs span nodes) and, for FTQ, its start
  tpn <- rank_values(run, "ticks_per_ns", as.numeric(meta$ticks_per_ns %||% NA_real_))
  start <- if (fixed_time(info)) rank_values(run, "start_tick", as.numeric(meta$start_tick %||% NA))
  rows <- as.numeric(rank_values(run, info$samples_per_rank))
  if (anyNA(rows)) {
    stop_input(json_path, sprintf("no \"%s\" in the run description", info$samples_per_rank))
  }
  ranges <- rank_file_ranges(run, json_path)
  make <- function(i) {
    t <- list2env(list(unit = unit[i], cpu = cpu[i], host = hosts_of[i],
      ticks_per_ns = tpn[i], start_tick = if (!is.null(start)) start[i]))
    delayedAssign("data", read_kernel_files(file.path(dir, files[i, ]), rows[i],
      if (!is.null(ranges)) cbind(ranges$offset[i, ], ranges$bytes[i, ]), info, json_path),
      assign.env = t)
    # the distribution of the samples, read once for the statistics that
    # need only that (NULL for detours, or samples that do not tabulate)
    delayedAssign("table", if (!records_detours(info)) {
      value_table(noise_values(list(kernel = kernel), data))
    }, eval.env = t, assign.env = t)
    t
  }
  run$threads <- rank_threads(make, list(unit = unit, cpu = cpu, host = hosts_of,
    ticks_per_ns = tpn))
  if (samples == "read") {
    for (t in as.list(run$threads)) {
      force(t$table)
      force(t$data)
    }
  }
  if (samples == "when_used") check_run_files(files, rows, ranges, dir, json_path)
  run
}

# The run with its ranks at positions `keep` only (their entries or rows)
keep_ranks <- function(run, keep) {
  if (!is.null(run$ranks)) {
    run$ranks <- run$ranks[keep]
  } else {
    run$meta[["ranks"]] <- run$meta[["ranks"]][keep]
  }
  run
}

# Each rank's data files' names: a matrix, a row a rank, a column a file
# kind (the ranks of a run write the same kinds), no column without files
rank_files <- function(run, json_path) {
  if (is.null(run$ranks)) {
    each <- lapply(run$meta[["ranks"]], function(u) as.character(unlist(u$files)))
    if (any(lengths(each) != lengths(each)[1])) {
      stop_input(json_path, "samples went to stdout (-s): no data files to analyse")
    }
    return(matrix(unlist(each), nrow = length(each), byrow = TRUE))
  }
  as.matrix(run$ranks[, rank_column_names(run, "files"), with = FALSE])
}

# Each rank's ranges of its node's data files (file_ranges: [offset, bytes]
# a file), as two matrices of rank_files' shape; NULL where each rank's
# files are its own. A range that is not two numbers of at least 0 is
# named by its rank.
rank_file_ranges <- function(run, json_path) {
  if (is.null(run$ranks)) {
    entries <- run$meta[["ranks"]]
    if (all(vapply(entries, function(u) is.null(u$file_ranges), TRUE))) return(NULL)
    pairs <- lapply(entries, function(u) {
      lapply(u$file_ranges %||% list(NULL), function(x) {
        v <- as.numeric(unlist(x))
        if (length(v) == 2) v else c(NA_real_, NA_real_)
      })
    })
    at <- function(k) do.call(rbind, lapply(pairs, function(p) vapply(p, `[`, 0, k)))
    out <- list(offset = at(1), bytes = at(2))
  } else {
    offsets <- grep("^file_ranges\\.[0-9]+\\.1$", names(run$ranks), value = TRUE)
    if (!length(offsets)) return(NULL)
    # a table's columns file_ranges.K.1 and file_ranges.K.2
    column <- function(names) as.matrix(run$ranks[, names, with = FALSE])
    out <- list(offset = column(offsets), bytes = column(sub("1$", "2", offsets)))
  }
  bad <- is.na(out$offset) | is.na(out$bytes) | out$offset < 0 | out$bytes < 0
  if (any(bad)) {
    i <- which(rowSums(bad) > 0)[1]
    rank <- rank_values(run, "rank", NA_integer_)[i]
    stop_input(json_path, sprintf("rank %s: file_ranges[%d] is not [offset, bytes]",
      if (is.na(rank)) "?" else rank, which(bad[i, ])[1]))
  }
  out
}

# The samples of all threads of a run in one table, with unit, cpu and host
# columns (for plots; the statistics work thread by thread). f(data, thread)
# may derive columns from each thread's samples.
run_long <- function(run, f = function(d, t) d) {
  rbindlist(lapply(run$threads, function(t) {
    f(t$data, t)[, `:=`(unit = t$unit, cpu = t$cpu, host = t$host)]
  }))
}

`%||%` <- function(a, b) if (is.null(a)) b else a

# A rank's data files, in one table of the columns kernels.json gives each
# file; the rows each must hold are the rank's samples (or detours).
# ranges: a row a file, c(offset, bytes) of its node's file (NULL: its own).
read_kernel_files <- function(files, n, ranges, info, json_path) {
  columns <- lapply(info$files, function(spec) {
    k <- which(endsWith(files, paste0("_", spec$suffix)))
    if (length(k) != 1) {
      stop_input(json_path, sprintf("a rank lists no _%s file", spec$suffix))
    }
    names <- unlist(spec$columns)
    # small whole numbers (FTQ counts) as integers: see read_numbers
    classes <- if (all(names %in% unlist(info$integer_columns))) "integer" else "double"
    read_numbers(files[k], names, n, classes = classes,
      range = if (!is.null(ranges)) ranges[k, ])
  })
  # the columns as they were read: := would copy them
  setDT(unlist(columns, recursive = FALSE))
}

# read_kernel_files' checks that need no reading (check_file_end's), of
# every rank of a run at once: each file's size asked once and each file
# opened once, as a node's data file holds all its ranks' ranges (65,536
# ranks in 512 node files: 512 opens, not 65,536). The first rank in order
# with a fault is the one named, as a rank-by-rank check would.
# files, rows, ranges: the run's (rank_files, each rank's samples,
# rank_file_ranges), taken rank by rank.
check_run_files <- function(files, rows, ranges, dir, json_path) {
  by_rank <- function(m) as.vector(t(m))
  each <- data.table(path = file.path(dir, by_rank(files)),
    offset = if (is.null(ranges)) NA_real_ else by_rank(ranges$offset),
    bytes = if (is.null(ranges)) NA_real_ else by_rank(ranges$bytes),
    rows = rep(rows, each = ncol(files)))
  if (nrow(each) == 0) return(invisible())
  paths <- unique(each$path)
  size <- file.size(paths)[match(each$path, paths)]
  own <- is.na(each$offset)
  end <- ifelse(own, size, each$offset + each$bytes)
  empty <- !is.na(size) & (end == 0 | (!own & each$bytes == 0))
  fault <- rep(NA_character_, nrow(each))
  fault[empty & each$rows > 0] <- sprintf("empty, the JSON says %d lines",
    each$rows[empty & each$rows > 0])
  short <- !own & !is.na(size) & size < end
  fault[short] <- sprintf("%.0f bytes, but a rank's data end at byte %.0f (truncated?)",
    size[short], end[short])
  fault[is.na(size)] <- "missing (the run's JSON lists it)"
  ends <- which(is.na(fault) & !empty)
  # a range that ends where another of its file begins is read as far as
  # that one: a cut takes a file's end, so the last byte of each run of
  # adjacent ranges is the one to read (a node's file of 128 ranks: one)
  if (!all(own)) {
    starts <- unique(data.table(path = each$path[!own], at = each$offset[!own]))
    inner <- starts[data.table(path = each$path[ends], at = end[ends]), on = c("path", "at"),
      which = TRUE]
    ends <- ends[is.na(inner)]
  }
  last <- raw(nrow(each))
  for (k in split(ends, factor(each$path[ends], paths))) {
    if (length(k) == 0) next
    con <- file(each$path[k[1]], "rb")
    last[k] <- vapply(end[k], function(e) {
      seek(con, e - 1)
      readBin(con, "raw", 1)
    }, as.raw(0))
    close(con)
  }
  cut <- ends[last[ends] != as.raw(10)]
  fault[cut] <- "cut short (no newline at the end: truncated?)"
  first <- which(!is.na(fault))[1]
  if (!is.na(first)) {
    # a file missing or shorter than its ranges is named without its range
    whole <- own[first] || is.na(size[first]) || short[first]
    stop_input(range_label(each$path[first],
      if (!whole) c(each$offset[first], each$bytes[first])), fault[first])
  }
  invisible()
}

# Every run under results_dir (streamed runs apart: stream.R), and
# noise-info's machine description if there.
#' Read kernel runs
#'
#' \code{read_results} finds and reads every kernel run under a directory;
#' \code{read_run} reads one run from its JSON description (and the node files
#' it lists, beyond 4,096 ranks) and the data files it lists; \code{read_ranks_table} reads a run's
#' ranks as one table, a row a rank, from its nodes' ranks tables (each rank's entry flattened,
#' its columns named by their paths: \code{stats.min}, \code{stretches.n.1}); \code{read_json_file}
#' reads a JSON file. Bad input stops with one
#' line naming the file (and line) and what is wrong, an error of class
#' \code{noisebench_input_error}, which \code{stop_input} raises.
#'
#' @param results_dir a directory holding kernel runs.
#' @param json_path,path a JSON file.
#' @param samples \code{"read"}: read and check every rank's data files now; \code{"when_used"}:
#'   check now only that each is there and ends in a newline, and read a rank's samples when they are
#'   first used (the report, which takes most of what it shows from the ranks' summaries in the
#'   JSON).
#' @param meta the run's description, if already read.
#' @param nan \code{TRUE}: a bare \code{NaN} or \code{Infinity}, which Python's json writes
#'   (ReFrame's report), read as \code{null}.
#' @param hosts a regular expression: the ranks on the hosts whose names match it only, the figures
#'   the kernels reduced over every rank taken again of them (\code{read_run} returns \code{NULL}
#'   when none does); of a run whose description lists node files, the other nodes' files are not
#'   read.
#' @param defer \code{TRUE}: each rank's stretches (\code{stretches.n.*}, \code{stretches.sum.*})
#'   left in the files, read again when asked for, and each row marked with its file and line
#'   (\code{.file}, \code{.row}), as \code{read_run} reads a run's tables.
#' @param columns a regular expression: only the columns whose names match it (and the first
#'   ones, rank to smt_thread), as a check that reads few of each rank's figures does.
#' @param file,line where the input is bad.
#' @param what what is wrong with it.
#' @return \code{read_results}: a named list of runs; \code{read_ranks_table}: a data.table;
#' \code{read_run}: one run, a
#' list with its kernel, description (\code{meta}) and ranks (environments
#' holding each one's \code{data}, its samples);
#' \code{read_json_file}: the parsed JSON.
#' @order 1
#' @export
read_results <- function(results_dir, samples = c("read", "when_used"), hosts = NULL) {
  samples <- match.arg(samples)
  paths <- find_runs(sub("/+$", "", results_dir))
  stream_paths <- paths[grepl(stream_json_pattern, paths)]
  paths <- paths[!grepl(stream_json_pattern, paths)]
  metas <- lapply(paths, read_json_file)
  # [[ ]]: `$` would take the catalogue's "kernels" (a build tree's copy) for "kernel"
  is_run <- vapply(metas, function(m) !is.null(m[["kernel"]]) && is.null(m[["stream"]]),
    logical(1))
  machine_path <- paths[vapply(metas, function(m) is.null(m[["kernel"]]), TRUE) &
    basename(paths) == "machine.json"]
  runs <- Map(function(path, meta) read_run(path, samples, meta, hosts), paths[is_run],
    metas[is_run])
  runs <- Filter(Negate(is.null), runs)
  streams <- read_streams(stream_paths, paths, metas, hosts)
  if (length(runs) == 0 && length(streams) == 0) {
    if (!is.null(hosts) && length(paths)) {
      stop_input(results_dir, sprintf("no rank ran on a host matching '%s'", hosts))
    }
    stop_input(results_dir, paste0("no kernel runs (PREFIX.json files written by ",
      paste(names(noisebench_kernels$kernels), collapse = ", "), ")"))
  }
  prefix <- paste0(sub("/+$", "", results_dir), "/")
  names(runs) <- vapply(runs, function(r) sub(prefix, "", r$name, fixed = TRUE), character(1))
  names(streams) <- sub(prefix, "", names(streams), fixed = TRUE)
  list(
    dir = results_dir, runs = runs, streams = streams,
    machine = if (length(machine_path)) read_json_file(machine_path[1]) else NULL
  )
}
