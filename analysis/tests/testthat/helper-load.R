source(testthat::test_path("..", "..", "R", "load.R"))
load_analysis(testthat::test_path("..", "..", "R"))
