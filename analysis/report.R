#!/usr/bin/env Rscript
# Rscript analysis/report.R RESULTS_DIR
# Writes RESULTS_DIR/report/ (index.html, figures, CSV tables) from every
# kernel run found under RESULTS_DIR, and prints the page's path.
args <- commandArgs(trailingOnly = TRUE)
if (length(args) != 1 || args[1] %in% c("-h", "--help")) {
  message("usage: Rscript analysis/report.R RESULTS_DIR")
  quit(status = 2)
}
script <- sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))
source(file.path(dirname(script), "R", "load.R"))
load_analysis(file.path(dirname(script), "R"))

page <- tryCatch(write_report(args[1]), error = function(e) {
  message("report.R: ", conditionMessage(e))
  quit(status = 1)
})
cat("report:", page, "\n")
