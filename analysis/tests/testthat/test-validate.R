# validate_results on real runs: tests/test_validate.py. Here its parts.

test_that("ranks are named in runs, a long list cut", {
  expect_equal(number_list(c(7, 0, 1, 2, 3, 9)), "0-3, 7, 9")
  expect_equal(number_list(5), "5")
  expect_equal(number_list(seq(0, 100, by = 2), k = 3), "0, 2, 4, ...")
})

test_that("a job's status is its own word and detail, unfinished without one", {
  dir <- withr_tempdir()
  for (job in c("a", "b", "c", "d")) {
    dir.create(file.path(dir, job, "work"), recursive = TRUE)
    file.create(file.path(dir, job, "work", "run_kernel.sh"))
  }
  writeLines("status=ok started=1.5 ended=2.5", file.path(dir, "a", "work", "job_status"))
  writeLines("status=failed exit=2 started=1 ended=2", file.path(dir, "b", "work", "job_status"))
  writeLines("status=killed signal=TERM started=1 ended=2",
    file.path(dir, "c", "work", "job_status"))
  got <- job_statuses(dir)
  expect_equal(got$status, c("ok", "failed exit=2", "killed signal=TERM", "unfinished"))
  expect_equal(basename(dirname(got$dir)), c("a", "b", "c", "d"))
})
