library(testthat)
library(noisebench)

test_check("noisebench")
