#!/usr/bin/env Rscript
# Rscript analysis/inst/acceptance.R REPORT.json [OUT_DIR]
# The acceptance summary of a ReFrame run (reframe ... --report-file
# REPORT.json): every check, partition and figure with its bound and verdict,
# printed as Markdown and written to OUT_DIR (default: the report's
# directory) as acceptance.md and acceptance.csv.
args <- commandArgs(trailingOnly = TRUE)
if (!length(args) %in% 1:2 || args[1] %in% c("-h", "--help")) {
  message("usage: ", Sys.getenv("NB_COMMAND", "Rscript analysis/inst/acceptance.R"),
    " REPORT.json [OUT_DIR]")
  quit(status = 2)
}
source(file.path(dirname(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))),
  "load_package.R"))

out <- if (length(args) == 2) args[2] else dirname(args[1])
tryCatch({
  if (!file.exists(args[1])) stop_input(args[1], "no such file")
  table <- acceptance_table(args[1])
  markdown <- acceptance_markdown(table)
  dir.create(out, showWarnings = FALSE, recursive = TRUE)
  fwrite(table, file.path(out, "acceptance.csv"))
  writeLines(markdown, file.path(out, "acceptance.md"))
}, error = function(e) {
  message("acceptance.R: ", conditionMessage(e))
  quit(status = 1)
})
writeLines(markdown)
