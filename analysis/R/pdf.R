# report.pdf beside index.html: the same page printed on A4 by headless
# Chromium (the page's print style starts each section on a page and cuts
# no plot or table row). A login node without a browser gets the rest of
# the report and a line saying how to make the PDF where one is.

pdf_renderer <- function() {
  found <- Sys.which(c("chromium", "chromium-browser", "google-chrome"))
  found <- found[nzchar(found)]
  if (length(found)) unname(found[1]) else ""
}

# The line under the title: the PDF's link, or why there is none.
pdf_note <- function(pdf) {
  if (!pdf) return(NULL)
  if (nzchar(pdf_renderer())) return('<a href="report.pdf">report.pdf</a> (A4)')
  paste("no PDF: no Chromium on this machine; <code>Rscript analysis/inst/report.R --pdf DIR</code>",
    "makes it where one is installed")
}

# The page as it prints: a long table's rows past those printed left out,
# which print hides anyway (html.R's print style), so that the browser
# does not lay out a whole machine's rows to print 30 (8,192 rows of two
# tables took it 18 s, and most of the report's memory). html_table starts
# each row but the first on a line of its own.
print_page <- function(html) {
  html <- paste(html, collapse = "\n")
  tables <- gregexpr('(?s)<table class="long".*?</table>', html, perl = TRUE)
  regmatches(html, tables) <- list(vapply(regmatches(html, tables)[[1]], function(table) {
    rows <- strsplit(table, "\n<tr>", fixed = TRUE)[[1]]
    if (length(rows) <= print_rows_max) return(table)
    # what follows the last row: the table's closing tags
    end <- sub("(?s)^.*</tr>", "", rows[length(rows)], perl = TRUE)
    paste0(paste(rows[seq_len(print_rows_max)], collapse = "\n<tr>"), end)
  }, "", USE.NAMES = FALSE))
  html
}

# Without a renderer, it says so in one line and returns NULL.
#' @rdname write_report
#' @param report_dir a report directory (its \file{index.html}): \code{write_pdf} prints it to
#'   \file{report.pdf} there, whole or not at all.
#' @export
write_pdf <- function(report_dir) {
  dir <- report_dir
  browser <- pdf_renderer()
  if (!nzchar(browser)) {
    message("report: no PDF (no Chromium here); Rscript analysis/inst/report.R --pdf ", dir,
      " makes it where one is")
    return(invisible(NULL))
  }
  page <- file.path(dir, ".print.html")
  writeLines(print_page(readLines(file.path(dir, "index.html"), warn = FALSE)), page,
    useBytes = TRUE)
  page <- normalizePath(page)
  tmp <- file.path(dir, ".report.pdf.tmp")
  profile <- tempfile("noisebench-chromium")
  on.exit(unlink(c(profile, page), recursive = TRUE), add = TRUE)
  # --no-sandbox: Chromium's sandbox refuses root, as a report job often runs
  args <- c("--headless", "--no-sandbox", "--disable-gpu", "--no-pdf-header-footer",
    paste0("--user-data-dir=", profile), paste0("--print-to-pdf=", tmp),
    paste0("file://", page))
  log <- suppressWarnings(system2(browser, args, stdout = TRUE, stderr = TRUE, timeout = 120))
  status <- attr(log, "status") %||% 0
  if (status != 0 || !file.exists(tmp) || file.size(tmp) == 0) {
    unlink(tmp)
    stop("cannot print ", page, " to PDF with ", browser, ": ",
      paste(utils::tail(log, 2), collapse = " "), call. = FALSE)
  }
  file.rename(tmp, file.path(dir, "report.pdf"))
  invisible(file.path(dir, "report.pdf"))
}
