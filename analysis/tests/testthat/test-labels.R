
test_that("a run over many nodes is labelled by their count, not every name", {
  expect_equal(format_hosts(c("a", "b")), "a b")
  expect_equal(format_hosts(sprintf("n%05d", 1:10000)), "10,000 nodes (n00001 ... n10000)")
})
