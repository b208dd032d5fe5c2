# report.pdf: printed by headless Chromium where it is; where it is not (a
# login node), one line says so and the rest of the report is written.

test_that("without a browser the report says so in one line and writes the rest", {
  dir <- withr_tempdir()
  write_fwq(dir, "fwq", list(rep(1000, 100)))
  path <- Sys.getenv("PATH")
  on.exit(Sys.setenv(PATH = path), add = TRUE)
  Sys.setenv(PATH = withr_tempdir())
  expect_equal(pdf_renderer(), "")
  expect_message(page <- write_report(dir), "no PDF \\(no Chromium here\\); Rscript analysis/inst/report.R --pdf ")
  expect_false(file.exists(file.path(dir, "report", "report.pdf")))
  expect_match(paste(readLines(page), collapse = "\n"), "no PDF: no Chromium on this machine")
})

test_that("where a browser is, report.pdf is printed beside the page", {
  skip_if(!nzchar(pdf_renderer()), "no Chromium here")
  dir <- withr_tempdir()
  write_fwq(dir, "fwq", list(rep(1000, 100)))
  page <- write_report(dir)
  pdf <- file.path(dir, "report", "report.pdf")
  expect_gt(file.size(pdf), 10000)
  expect_equal(readBin(pdf, "raw", 5), charToRaw("%PDF-"))
  # and again on its own, as report.R --pdf does
  unlink(pdf)
  write_pdf(dirname(page))
  expect_true(file.exists(pdf))
  expect_length(list.files(dirname(page), "\\.tmp$", all.files = TRUE), 0)
})

test_that("the page printed leaves out the long tables' rows that print hides", {
  long <- data.table(host = sprintf("nb%05d", 1:100), noise_percent = 1:100)
  short <- data.table(host = c("a", "b"), noise_percent = 1:2)
  html <- c("<p>before</p>", html_table(long, "long one", "long.csv"), html_table(short),
    "<p>after</p>")
  printed <- print_page(html)
  rows <- function(x) lengths(regmatches(x, gregexpr("<tr>", x)))
  # the header's row and the first print_rows_max of the long table, both of the short one
  expect_equal(rows(printed), 1 + print_rows_max + 1 + 2)
  expect_match(printed, "nb00030</td>")
  expect_no_match(printed, "nb00031</td>")
  expect_equal(lengths(regmatches(printed, gregexpr("</tbody>\\s*</table>", printed))), 2)
  expect_match(printed, "<p>before</p>.*Printed: the first 30 of these 100 rows.*<p>after</p>")
  # a page without long tables prints as it is
  expect_equal(print_page(c("<p>x</p>", html_table(short))),
    paste(c("<p>x</p>", html_table(short)), collapse = "\n"))
})
