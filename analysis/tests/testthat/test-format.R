# Numbers as a reader wants them: 3 significant digits, thousands
# separators, no e-notation, no trailing zeros.

test_that("numbers have 3 significant digits, separators and no e-notation", {
  expect_equal(format_number(c(17680.4, 12250, 1234567, 0.0000000, 1.5, 2, 0.0412345)),
    c("17,700", "12,250", "1,234,567", "0", "1.5", "2", "0.0412"))
  expect_equal(format_number(c(1e-6, 3.14159, 99.95, 123.456, NA, Inf)),
    c("0.000001", "3.14", "100", "123", "", "\u221e"))
  expect_false(any(grepl("e[+-]", format_number(10^(-9:12)))))
})

test_that("headers are words with units, empty columns are left out", {
  expect_equal(header_words(c("noise_percent", "p99_9_us", "gap_ms", "made_up")),
    c("System took (%)", "p99.9 loss (\u00b5s)", "Gap (ms)", "Made up"))
  dt <- data.table(a = 1:2, b = c(NA, NA), c = c("", ""), d = c("x", ""))
  expect_equal(names(drop_empty_columns(dt)), c("a", "d"))
  html <- html_table(dt)
  expect_false(grepl("<th[^>]*>B</th>", html))
  expect_equal(html_table(dt[0]), "")
})
