# A ReFrame report as its --report-file writes it: a fixture, a check whose
# figures were judged, one that failed before it had any.
write_reframe_report <- function(dir) {
  perf <- function(value, ref, lower, upper, unit, result) {
    list(value, ref, lower, upper, unit, result)
  }
  report <- list(session_info = list(), runs = list(list(testcases = list(
    list(display_name = "noisebench_build", fixture = TRUE, system = "s", partition = "p",
      jobid = NULL, result = "pass", perfvalues = list()),
    list(display_name = "fwq_noise_check %work=asm", fixture = FALSE, system = "s",
      partition = "p", jobid = "42", result = "fail", fail_phase = "performance",
      perfvalues = list(
        "s:p:max_scaled_noise_mean" = perf(0.3, 0.25, NULL, 0, "", "fail"),
        "s:p:max_kurtosis" = perf(5, 100, NULL, 0, "", "pass"))),
    list(display_name = "ftq_noise_check %frequency_hz=7000", fixture = FALSE, system = "s",
      partition = "p", jobid = "43", result = "pass", fail_phase = NULL,
      perfvalues = list(
        "s:p:noise_fraction" = perf(0.01, 0.25, NULL, 0, "", "pass"),
        "s:p:largest_peak_hz" = perf(1000, 0, NULL, NULL, "Hz", "pass"),
        "s:p:band" = perf(10, 10, -0.1, 0.1, "%", "pass"))),
    list(display_name = "selfish_noise_check", fixture = FALSE, system = "s", partition = "p",
      jobid = "44", result = "fail", fail_phase = "sanity",
      fail_reason = "sanity error: pattern not found\nmore", perfvalues = list()),
    list(display_name = "psnap_noise_check %layout=1", fixture = FALSE, system = "s",
      partition = "p", jobid = NULL, result = "skip", perfvalues = list())
  ))))
  path <- file.path(dir, "report.json")
  jsonlite::write_json(report, path, auto_unbox = TRUE, null = "null", digits = NA)
  path
}

test_that("every figure is a row with its bound and verdict, fixtures left out", {
  table <- acceptance_table(write_reframe_report(withr_tempdir()))
  expect_false("noisebench_build" %in% table$check)
  # a check the preset skipped did not run
  expect_false("psnap_noise_check %layout=1" %in% table$check)
  asm <- table[check == "fwq_noise_check %work=asm"]
  expect_equal(asm$figure, c("max_scaled_noise_mean", "max_kurtosis"))
  expect_equal(asm$bound, c("<= 0.25", "<= 100"))
  expect_equal(asm$verdict, c("fail", "pass"))
  expect_equal(asm$job_id, c("42", "42"))
  ftq <- table[check == "ftq_noise_check %frequency_hz=7000"]
  expect_equal(ftq$bound, c("<= 0.25", "none", "9 .. 11"))
  expect_equal(ftq$verdict, c("pass", "no bound", "pass"))
})

test_that("a verdict no rule gave is not judged, and the check not counted as met", {
  dir <- withr_tempdir()
  path <- write_reframe_report(dir)
  # a survey's check logs rules_judged 0; an acceptance check's rules_unmet
  # is NaN, which ReFrame writes bare (not JSON)
  text <- sub('"s:p:noise_fraction"', '"s:p:rules_judged": [0, 0, null, null, "rules", "pass"],
    "s:p:noise_fraction"', readLines(path, warn = FALSE), fixed = TRUE)
  text <- sub('"s:p:max_kurtosis"', '"s:p:rules_unmet": [NaN, 0, null, 0, "rules", "fail"],
    "s:p:max_kurtosis"', text, fixed = TRUE)
  writeLines(text, path)
  table <- acceptance_table(path)
  row <- table[check == "ftq_noise_check %frequency_hz=7000" & figure == "rules_judged"]
  expect_equal(row$verdict, "not judged")
  row <- table[check == "fwq_noise_check %work=asm" & figure == "rules_unmet"]
  expect_equal(row$verdict, "not judged")
  expect_true(is.na(row$value))
  expect_match(acceptance_markdown(table), "s:p: 0 of 3 checks met every bound", all = FALSE)
})

test_that("a check that failed before its figures says where and why", {
  table <- acceptance_table(write_reframe_report(withr_tempdir()))
  row <- table[check == "selfish_noise_check"]
  expect_equal(nrow(row), 1)
  expect_equal(row$verdict, "fail (sanity: sanity error: pattern not found)")
})

test_that("the Markdown counts the checks that met every bound", {
  md <- acceptance_markdown(acceptance_table(write_reframe_report(withr_tempdir())))
  expect_match(md[1], "^\\| check \\| partition")
  expect_equal(md[length(md)], "s:p: 1 of 3 checks met every bound")
})

test_that("a broken or empty report is one error naming the file", {
  dir <- withr_tempdir()
  path <- file.path(dir, "r.json")
  writeLines('{"runs": [', path)
  expect_error(acceptance_table(path), "r.json: not valid JSON", class = "noisebench_input_error")
  writeLines('{"runs": []}', path)
  expect_error(acceptance_table(path), "r.json: no runs", class = "noisebench_input_error")
})
