# What the package knows of each kernel comes from the catalogue alone.

test_that("a kernel's entry is the catalogue's, and an unknown one says where", {
  path <- system.file("kernels.json", package = "noisebench")
  catalogue <- jsonlite::fromJSON(path, simplifyVector = FALSE)
  for (k in names(catalogue$kernels)) {
    expect_identical(kernel_info(k), catalogue$kernels[[k]])
  }
  err <- tryCatch(kernel_info("nosuch", "runs/a.json"), error = identity)
  expect_s3_class(err, "noisebench_input_error")
  expect_match(conditionMessage(err), "^runs/a.json: unknown kernel 'nosuch'")
  expect_match(conditionMessage(err), paste(names(catalogue$kernels), collapse = ", "),
    fixed = TRUE)
})

test_that("the kinds a kernel is read by are the catalogue's fields", {
  for (k in names(noisebench_kernels$kernels)) {
    info <- kernel_info(k)
    expect_identical(fixed_time(info), info$fixed == "time")
    expect_identical(records_detours(info), info$loss == "detours")
    expect_identical(traced(info), info$fixed == "work")
  }
  expect_setequal(kernels_where(fixed_time),
    names(Filter(function(i) i$fixed == "time", noisebench_kernels$kernels)))
  expect_equal(values_per_ns(list(value_unit = "ticks"), 2.5), 2.5)
  expect_equal(values_per_ns(list(value_unit = "ns"), 2.5), 1)
})

test_that("kernels are named in words by their labels, joined as a sentence would", {
  labels <- vapply(noisebench_kernels$kernels, function(i) i$label, "")
  expect_identical(kernel_labels(function(info) FALSE), "")
  one <- names(labels)[1]
  expect_identical(kernel_labels(function(info) identical(info, kernel_info(one))),
    unname(labels[one]))
  all <- kernel_labels(function(info) TRUE)
  expect_identical(all, paste(paste(utils::head(labels, -1), collapse = ", "), "and",
    utils::tail(labels, 1)))
})

test_that("a kernel's quote order is its catalogue's, NA where it has none", {
  quoted <- names(Filter(function(i) !is.null(i$quote$noise), noisebench_kernels$kernels))
  expect_equal(quote_order(quoted, "noise"),
    vapply(quoted, function(k) kernel_info(k)$quote$noise, 0, USE.NAMES = FALSE))
  expect_true(is.na(quote_order(NA_character_, "noise")))
  expect_true(is.na(quote_order(quoted[1], "no such use")))
})

test_that("the kernels' own tables and figures are the catalogue's, each a function here", {
  tables <- kernel_tables()
  expect_gt(length(tables), 0)
  for (t in tables) {
    expect_true(is.function(kernel_function(t$make)), label = t$make)
    expect_true(is.null(t$section) || t$section %in% c("evidence", "details"), label = t$name)
  }
  for (f in kernel_plots()) expect_true(is.function(kernel_function(f)), label = f)
})
