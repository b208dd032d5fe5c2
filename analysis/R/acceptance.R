# The acceptance summary of a ReFrame run, for a procurement report: from
# ReFrame's JSON report (--report-file), one row per check, partition and
# figure, with the bound it was held to and whether it met it.

# The bound a reference (value, lower, upper thresholds as fractions of the
# value) sets, as text: "<= 0.25", ">= 10", "9 .. 11", or "none".
reference_bound <- function(ref, lower, upper) {
  if (is.null(ref) || (is.null(lower) && is.null(upper))) return("none")
  lo <- if (!is.null(lower)) ref * (1 + lower)
  hi <- if (!is.null(upper)) ref * (1 + upper)
  fmt <- function(x) trimws(formatC(x, digits = 4, format = "g"))
  if (is.null(lo)) return(paste("<=", fmt(hi)))
  if (is.null(hi)) return(paste(">=", fmt(lo)))
  paste(fmt(lo), "..", fmt(hi))
}

# A testcase's rows: its figures (perfvalues: value, reference, lower,
# upper, unit, result), or, when it failed before its figures were taken,
# one row saying in which phase and why.
# Whether a check's figure says that no rule judged its run.
not_judged <- function(key, value) {
  value <- as.numeric(value %||% NA_real_)
  grepl(":rules_judged$", key) && isTRUE(value == 0) || grepl(":rules_unmet$", key) && is.na(value)
}

testcase_rows <- function(tc) {
  base <- data.table(check = tc$display_name, partition = paste0(tc$system, ":", tc$partition),
    job_id = as.character(tc$jobid %||% NA_character_))
  values <- tc$perfvalues %||% list()
  if (length(values) == 0 || !is.null(tc$fail_phase) && tc$fail_phase != "performance") {
    reason <- sub("\n.*", "", trimws(tc$fail_reason %||% ""))
    return(copy(base)[, `:=`(figure = NA_character_, value = NA_real_, unit = NA_character_,
      bound = NA_character_,
      verdict = if (identical(tc$result, "pass")) "pass" else
        sprintf("fail (%s: %s)", tc$fail_phase %||% "?", reason))])
  }
  rbindlist(lapply(names(values), function(key) {
    v <- values[[key]]
    bound <- reference_bound(v[[2]], v[[3]], v[[4]])
    copy(base)[, `:=`(figure = sub(".*:", "", key), value = as.numeric(v[[1]] %||% NA_real_),
      unit = v[[5]] %||% "", bound = bound,
      # a figure without a bound is logged, not judged; a run no rule judged
      # (rules_judged 0, or rules_unmet NaN) is not judged, never a pass
      verdict = if (not_judged(key, v[[1]])) "not judged" else
        if (bound == "none") "no bound" else v[[6]] %||% "?")]
  }))
}

# Every check of the report's last run (a rerun of failures is a later run),
# fixtures (the build) and skipped checks left out.
#' @rdname noise_summary
#' @export
acceptance_table <- function(report_path) {
  # ReFrame writes a figure no rule judged as a bare NaN
  report <- read_json_file(report_path, nan = TRUE)
  runs <- report$runs
  if (length(runs) == 0) stop_input(report_path, "no runs in this ReFrame report")
  # a check the preset skipped (the acceptance preset runs every core only) did not run
  cases <- Filter(function(tc) !isTRUE(tc$fixture) && !identical(tc$result, "skip"),
    runs[[length(runs)]]$testcases)
  if (length(cases) == 0) stop_input(report_path, "no checks in the report's last run")
  rbindlist(lapply(cases, testcase_rows))
}

# The table as Markdown, and a line per partition: how many checks passed.
#' @rdname noise_summary
#' @export
acceptance_markdown <- function(table) {
  cell <- function(x) ifelse(is.na(x), "", as.character(x))
  shown <- table[, .(check, partition, job_id, figure,
    value = ifelse(is.na(value), "", trimws(formatC(value, digits = 4, format = "g"))), unit, bound,
    verdict)]
  lines <- c(
    paste0("| ", paste(names(shown), collapse = " | "), " |"),
    paste0("|", paste(rep(" --- |", ncol(shown)), collapse = "")),
    do.call(paste, c(lapply(shown, cell), sep = " | ")) |> (\(r) paste0("| ", r, " |"))()
  )
  per_check <- table[, .(pass = all(verdict %in% c("pass", "no bound"))),
    by = .(check, partition)]
  totals <- per_check[, .(passed = sum(pass), checks = .N), by = partition]
  c(lines, "", sprintf("%s: %d of %d checks met every bound", totals$partition, totals$passed,
    totals$checks))
}
