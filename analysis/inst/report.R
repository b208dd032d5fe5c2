#!/usr/bin/env Rscript
# Rscript analysis/inst/report.R RESULTS_DIR [--hosts REGEX [--out DIR]] [--machine-cpus N]
#                                [--locations CSV | --topology topology.conf] [--no-pdf]
#   Writes RESULTS_DIR/report/ (index.html, report.pdf, figures, CSV tables) from every
#   kernel run found under RESULTS_DIR, and prints the page's path. With
#   --hosts, of the ranks on the hosts whose names match the regular
#   expression REGEX only (a group of nodes of a survey too large for one
#   report; a run's node files of other hosts are not read), into DIR
#   (default RESULTS_DIR/report-<REGEX, other characters than letters,
#   digits, '.' and '-' as _>). --machine-cpus: the processes the first
#   screen predicts the slowdown at (the whole machine's CPUs; default the
#   CPUs the survey measured). --locations: a site's CSV of each node's place
#   (host, then a column a level, the largest first: host,cabinet,chassis);
#   --topology: Slurm's topology.conf (a node's switch and the one above);
#   without either, HPE Cray xnames in the host names place the nodes. The
#   outliers and the machine map go by those levels. --no-pdf: no report.pdf.
# Rscript analysis/inst/report.R --pdf REPORT_DIR
#   Prints REPORT_DIR/index.html to REPORT_DIR/report.pdf (where the report
#   was made without a browser).
# Rscript analysis/inst/report.R --compare A B [OUT_DIR]
#   Compares two results directories (two systems, or before and after a
#   tuning): OUT_DIR (default B/report-vs-<A's name>/) gets index.html,
#   compare.csv, manifests.csv and the overlaid figures.
# Rscript analysis/inst/report.R --validate RESULTS_DIR [--requirements FILE]
#   Checks the survey against DESCRIPTION.md's Verification list (with
#   FILE: every run judged by FILE's rules): a line a fault, exit 1 if any.
args <- commandArgs(trailingOnly = TRUE)
# the command as its user typed it: noise-report says so
command <- Sys.getenv("NB_COMMAND", "Rscript analysis/inst/report.R")
usage <- function() {
  message("usage: ", command, " RESULTS_DIR [--hosts REGEX [--out DIR]] ",
    "[--machine-cpus N] [--locations CSV | --topology FILE] [--no-pdf]\n",
    "       ", command, " --pdf REPORT_DIR\n",
    "       ", command, " --compare A B [OUT_DIR]\n",
    "       ", command, " --validate RESULTS_DIR [--requirements FILE]")
  quit(status = 2)
}
option <- function(name) {
  at <- match(name, args)
  if (is.na(at)) return(NULL)
  if (at == length(args)) usage()
  args[at + 1]
}
compare <- length(args) >= 1 && args[1] == "--compare"
pdf_only <- length(args) >= 1 && args[1] == "--pdf"
validate <- length(args) >= 1 && args[1] == "--validate"
if (length(args) == 0 || args[1] %in% c("-h", "--help")) usage()
if (compare && !length(args) %in% 3:4) usage()
if (pdf_only && length(args) != 2) usage()
if (validate && !(length(args) == 2 || length(args) == 4 && args[3] == "--requirements")) usage()
hosts <- option("--hosts")
out <- option("--out")
machine_cpus <- option("--machine-cpus")
locations <- option("--locations")
topology <- option("--topology")
no_pdf <- "--no-pdf" %in% args
if (!is.null(machine_cpus) && !grepl("^[1-9][0-9]*$", machine_cpus)) {
  message("report.R: --machine-cpus wants a whole number of CPUs, not '", machine_cpus, "'")
  quit(status = 2)
}
if (!compare && !pdf_only && !validate && (length(args) != 1 + 2 * length(hosts) + 2 * length(out) +
  2 * length(machine_cpus) + 2 * length(locations) + 2 * length(topology) + no_pdf ||
  (!is.null(out) && is.null(hosts)) || (!is.null(locations) && !is.null(topology)) ||
  startsWith(args[1], "--"))) usage()
source(file.path(dirname(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))),
  "load_package.R"))

if (validate) {
  faults <- tryCatch({
    rules <- if (length(args) == 4) requirements_rules(args[4])
    validate_results(args[2], rules)
  }, error = function(e) {
    message("report.R: ", conditionMessage(e))
    quit(status = 2)
  })
  writeLines(faults)
  judged <- if (length(args) == 4) {
    sprintf(", judged by %s (md5 %s)", args[4], unname(tools::md5sum(args[4])))
  } else ""
  cat(sprintf("%s: %d faults in %d runs and %d jobs%s\n", if (length(faults)) "invalid" else
    "valid", length(faults), attr(faults, "runs"), attr(faults, "jobs"), judged))
  quit(status = if (length(faults)) 1 else 0)
}
page <- tryCatch(
  if (compare) write_comparison(args[2], args[3], if (length(args) == 4) args[4]) else
    if (pdf_only) write_pdf(args[2]) else
    write_report(args[1], hosts, out, if (!is.null(machine_cpus)) as.numeric(machine_cpus),
      pdf = !no_pdf, locations = locations, topology = topology),
  error = function(e) {
    message("report.R: ", conditionMessage(e))
    quit(status = 1)
  }
)
cat("report:", page, "\n")
