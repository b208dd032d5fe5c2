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
