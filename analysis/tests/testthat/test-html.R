# The page's HTML: tables that escape what they show, long ones searchable.

test_that("a table escapes its cells, right-aligns numbers and links its CSV", {
  out <- html_table(data.table(run = "<a&b>", noise_percent = 1.5), "Caption", "x.csv")
  expect_match(out, "<caption>Caption</caption>", fixed = TRUE)
  expect_match(out, "<td>&lt;a&amp;b&gt;</td>", fixed = TRUE)
  expect_match(out, '<td class="num">', fixed = TRUE)
  expect_match(out, '<a href="x.csv">x.csv</a>', fixed = TRUE)
  expect_false(grepl('class="long"', out, fixed = TRUE))
})

test_that("no row, no table; many rows, a search box and a printed first page", {
  expect_identical(html_table(data.table(a = numeric())), "")
  expect_identical(html_table(NULL), "")
  many <- data.table(cpu = seq_len(print_rows_max + 5))
  out <- html_table(many, csv = "m.csv")
  expect_match(out, 'class="long"', fixed = TRUE)
  expect_match(out, sprintf("Printed: the first %d of these %d rows; every row is in m.csv",
    print_rows_max, print_rows_max + 5), fixed = TRUE)
  expect_false(grepl("Printed", html_table(many[seq_len(table_rows_searchable + 1)])))
})

test_that("a section, a figure and the page hold what they were given", {
  s <- html_section("verdict", "Verdict", "<p>x</p>")
  expect_identical(s[c(1, length(s))], c('<section id="verdict">', "</section>"))
  expect_match(html_plot("a.png", "A & B"), 'alt="A &amp; B"', fixed = TRUE)
  page <- html_page("noisebench report: <vm>", list(s), "v1")
  expect_match(page, "^<!DOCTYPE html>")
  expect_match(page, "<title>noisebench report: &lt;vm&gt;</title>", fixed = TRUE)
  expect_match(page, '<p class="version">v1</p>', fixed = TRUE)
  expect_false(grepl("http", page, fixed = TRUE))
})
