# The machines table on the page: a row a kind of machine.

test_that("identical hosts are one row, with their count and the first of them", {
  machines <- data.table(host = c("nb1", "nb2", "nb3", "gpu1"),
    cpu = c("EPYC", "EPYC", "EPYC", "Xeon"), cpus_online = c(128L, 128L, 128L, 64L))
  kinds <- machine_kinds(machines)
  expect_identical(names(kinds), c("host", "hosts", "cpu", "cpus_online"))
  expect_identical(kinds$hosts, c(3L, 1L))
  expect_identical(kinds$host, c("nb1 ...", "gpu1"))
})
