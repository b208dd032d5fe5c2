# An FWQ run with --trace: thread 0's causes file says, detour by detour,
# what held its CPU; the JSON only names the file.
write_traced <- function(dir, causes0, trace = list(attributed = TRUE, clock = "x86-tsc")) {
  write_fwq(dir, "fwq", list(1000 + 0:9, 1000 + 0:9))
  meta <- jsonlite::fromJSON(file.path(dir, "fwq.json"), simplifyVector = FALSE)
  meta$trace <- trace
  if (isTRUE(trace$attributed)) {
    fwrite(causes0, file.path(dir, "fwq_0_causes.dat"), sep = " ", col.names = FALSE)
    meta$ranks[[1]]$causes <- list(attributed = TRUE, file = "fwq_0_causes.dat")
  }
  write_json_run(dir, "fwq", meta)
}

two_detours <- data.table(
  start_ns = c(100, 100, 100, 5000, 5000),
  span_ns = c(900, 900, 900, 1200, 1200),
  lost_ns = c(600, 600, 600, 300, 300),
  class = c("timer", "timer", "hardware", "thread", "timer"),
  name = c("local_timer", "tick_nohz_handler", "-", "kworker/0:1:42", "local_timer"),
  time_ns = c(200, 300, 100, 240, 50)
)

test_that("the shares per class and the top names are added up from the causes file", {
  dir <- withr_tempdir()
  write_traced(dir, two_detours)
  runs <- read_results(dir)$runs
  s <- cause_shares(runs)
  expect_setequal(s$class, cause_classes)
  expect_equal(nrow(s), length(cause_classes)) # thread 1 was not traced
  timer <- s[class == "timer"]
  expect_equal(timer$detours, 2)
  expect_equal(timer$total_us, 0.55)
  expect_equal(timer$longest_us, 0.5) # both timer names in the first detour
  expect_equal(timer$share_percent, 100 * 550 / 890)
  expect_equal(s[class == "hardware"]$share_percent, 100 * 100 / 890)
  expect_equal(sum(s$share_percent), 100)
  expect_equal(s[class == "irq"]$detours, 0)
  top <- top_causes(runs)
  # most first: 300 ns, 200 + 50, 240, 100
  expect_equal(top$name, c("tick_nohz_handler", "local_timer", "kworker/0:1:42", "-"))
  expect_equal(unique(top$run), "fwq")
  expect_equal(top[name == "local_timer"]$detours, 2)
  expect_equal(top[name == "local_timer"]$total_us, 0.25)
})

test_that("a cause the kernels do not write is named with its file and line", {
  dir <- withr_tempdir()
  bad <- copy(two_detours)[4, class := "gremlin"]
  write_traced(dir, bad)
  runs <- read_results(dir)$runs
  expect_error(cause_shares(runs), "fwq_0_causes.dat:4: 'gremlin' is not a cause")
})

test_that("a run that could not trace says why, and the report still comes", {
  dir <- withr_tempdir()
  write_traced(dir, NULL, trace = list(attributed = FALSE, why = "no tracefs at /sys/kernel/tracing"))
  runs <- read_results(dir)$runs
  expect_equal(nrow(cause_shares(runs)), 0)
  expect_equal(untraced_runs(runs)$why, "no tracefs at /sys/kernel/tracing")
  page <- readLines(write_report(dir, pdf = FALSE))
  expect_true(any(grepl("no tracefs at /sys/kernel/tracing", page, fixed = TRUE)))
  expect_false(file.exists(file.path(dir, "report", "causes.png")))
})

test_that("the report has the noise-by-cause figure and table", {
  dir <- withr_tempdir()
  write_traced(dir, two_detours)
  page <- paste(readLines(write_report(dir, pdf = FALSE)), collapse = "\n")
  expect_true(file.size(file.path(dir, "report", "causes.png")) > 5000)
  expect_match(page, "causes.png", fixed = TRUE)
  expect_match(page, "tick_nohz_handler", fixed = TRUE)
  expect_equal(nrow(fread(file.path(dir, "report", "causes.csv"))), length(cause_classes))
})

test_that("a trace that lost events gives its unseen time on the page", {
  dir <- withr_tempdir()
  unseen <- rbind(two_detours, data.table(start_ns = 9000, span_ns = 2000, lost_ns = 1110,
    class = "unseen", name = "-", time_ns = 1110))
  write_traced(dir, unseen, trace = list(attributed = TRUE, clock = "x86-tsc",
    lost_events = 4321))
  runs <- read_results(dir)$runs
  gaps <- trace_gaps(runs, cause_shares(runs))
  expect_equal(gaps$lost_events, 4321)
  expect_equal(gaps$unseen_us, 1.11)
  expect_equal(gaps$unseen_percent, 100 * 1110 / 2000)
  expect_equal(length(unique(cause_colours())), length(cause_classes))
  page <- paste(readLines(write_report(dir, pdf = FALSE)), collapse = "\n")
  expect_match(page, "Traces that dropped events", fixed = TRUE)
  expect_match(page, "4,321", fixed = TRUE)
})

test_that("a trace that lost nothing has no gaps", {
  dir <- withr_tempdir()
  write_traced(dir, two_detours)
  runs <- read_results(dir)$runs
  expect_equal(nrow(trace_gaps(runs, cause_shares(runs))), 0)
})
