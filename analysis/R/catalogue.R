# The kernel catalogue, src/kernels/kernels.json, is the one description of
# the kernels that C, JUBE, ReFrame and this package read. The build installs
# it with the package (inst/kernels.json); NOISEBENCH_KERNELS names another.
# These are bound when the package loads (.onLoad), not when it is built.
noisebench_kernels <- NULL
# the cause classes a traced run's causes files may name
cause_classes <- NULL
# the simulator scale.R runs where its model does not hold: the one named,
# the one on PATH, or the one installed beside the package (PREFIX/bin for
# PREFIX/lib/R/noisebench, the build tree's bin/ likewise)
noisebench_simulator <- NULL

catalogue_path <- function() {
  path <- Sys.getenv("NOISEBENCH_KERNELS")
  if (nzchar(path)) path else system.file("kernels.json", package = "noisebench")
}

# A noisebench program: the one the variable names, the one on PATH, or the
# one installed beside the package; NA where there is none.
find_program <- function(name, variable) {
  installed <- file.path(system.file(package = "noisebench"), "..", "..", "..", "bin", name)
  found <- Filter(function(f) nzchar(f) && file.exists(f),
    c(Sys.getenv(variable), Sys.which(name), installed))
  if (length(found)) normalizePath(found[[1]]) else NA_character_
}

.onLoad <- function(libname, pkgname) {
  ns <- topenv()
  path <- catalogue_path()
  if (!nzchar(path) || !file.exists(path)) {
    stop("noisebench: no kernel catalogue (kernels.json) at '", path,
      "': reinstall the package from the build, or set NOISEBENCH_KERNELS", call. = FALSE)
  }
  kernels <- jsonlite::fromJSON(path, simplifyVector = FALSE)
  assign("noisebench_kernels", kernels, envir = ns)
  assign("cause_classes", unlist(kernels$cause_classes), envir = ns)
  assign("noisebench_simulator", find_program("noise-simulate", "NOISEBENCH_SIMULATE"),
    envir = ns)
  # every core unless the user said how many (data.table's own default is half)
  if (!nzchar(Sys.getenv("R_DATATABLE_NUM_THREADS"))) setDTthreads(0)
}
