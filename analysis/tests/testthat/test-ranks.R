# A run's ranks read from its nodes' ranks tables give the report the
# kernels' run described in its JSON gives: every table the same.

# The members the kernels write as arrays, even of one element (JSON's
# writer here makes those scalars)
array_members <- list(c("files"), c("stretches", "n"), c("stretches", "sum"),
  c("tails", "histogram", "samples"), c("tails", "histogram", "lost_ns"),
  c("spectrum", "frequency_hz"), c("spectrum", "power"), c("spectrum", "above_floor"),
  c("spectrum", "share_percent"))

# Every run under dir rewritten as a run of node files: its ranks in one
# ranks table (rank, host and cpu first, as the kernels write them), its
# JSON naming it instead of holding them.
as_ranks_tables <- function(dir) {
  for (json in list.files(dir, "\\.json$", full.names = TRUE)) {
    meta <- jsonlite::fromJSON(json, simplifyVector = FALSE)
    if (is.null(meta$kernel)) next
    host <- meta$machine$hostname
    entries <- lapply(meta$ranks, function(r) {
      r$host <- r$host %||% host
      # a run of machines[] has each rank's injection in its entry
      r$inject <- r$inject %||% meta$inject
      for (path in array_members) {
        at <- Reduce(function(x, k) if (is.list(x)) x[[k]], path, r)
        if (!is.null(at)) r[[path]] <- as.list(unlist(at))
      }
      c(r[c("rank", "host", "cpu")], r[setdiff(names(r), c("rank", "host", "cpu"))])
    })
    prefix <- sub("\\.json$", "", basename(json))
    fwrite(ranks_table_rows(entries), file.path(dir, paste0(prefix, "_node0_ranks.csv")))
    hosts <- unique(vapply(entries, function(r) r$host, ""))
    meta$machines <- lapply(hosts, function(h) modifyList(meta$machine, list(hostname = h)))
    meta$ranks_in_run <- length(entries)
    meta$node_files <- list(paste0(prefix, "_node0.json"))
    meta$ranks_files <- list(paste0(prefix, "_node0_ranks.csv"))
    meta$ranks <- NULL
    write_json_run(dir, prefix, meta)
  }
}

test_that("a survey read from ranks tables reports as one read from its JSON", {
  dir <- synthetic_results()
  write_report(dir, pdf = FALSE)
  from_json <- file.path(dir, "report")
  kept <- withr_tempdir()
  file.copy(list.files(from_json, "\\.csv$", full.names = TRUE), kept)
  as_ranks_tables(dir)
  expect_true(is.data.table(read_results(dir, "when_used")$runs$fwq$ranks))
  write_report(dir, pdf = FALSE)
  tables <- list.files(kept, "\\.csv$")
  expect_gt(length(tables), 10)
  for (name in tables) {
    a <- fread(file.path(kept, name))
    b <- fread(file.path(dir, "report", name))
    expect_equal(b, a, label = name, tolerance = 1e-9)
  }
})
