#' noisebench: reports of OS noise
#'
#' Reads the runs noisebench's kernels write and turns them into the tables,
#' plots and page of a noise survey (\code{\link{write_report}}). The
#' command lines are in the installed package's directory: \file{report.R},
#' \file{acceptance.R}, \file{predict.R}.
#'
#' ggplot2 is called as \code{ggplot2::}, not imported: an import loads it
#' (0.6 s) in every process that loads this package, the slowdown model's
#' workers too, which draw nothing.
#'
#' @import data.table
#' @importFrom stats median
#' @keywords internal
"_PACKAGE"
