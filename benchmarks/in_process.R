# A step timed in an R process of its own, as report.R runs: a fresh heap,
# nothing read before it cached in R. A script sources this, then calls
# time_if_asked first: run as `SCRIPT --time WHAT DIR` it is the child.

# The child: steps[[WHAT]](DIR), then its seconds, the process's peak
# resident memory (MiB, VmHWM) and the CPU seconds it and the processes it
# waited for took (user and system) printed, and the process ends.
time_if_asked <- function(args, steps) {
  if (length(args) != 3 || args[1] != "--time") return(invisible())
  took <- system.time(steps[[args[2]]](args[3]))
  peak_kib <- proc_kib("/proc/self/status", "VmHWM")
  cpu <- sum(took[c("user.self", "sys.self", "user.child", "sys.child")], na.rm = TRUE)
  cat(took[["elapsed"]], peak_kib / 1024, cpu, "\n")
  quit(save = "no")
}

# The parent: c(seconds, peak MiB, CPU seconds) of WHAT on DIR in a child
# of script. The peak is the larger of the child's own VmHWM and the
# proportional memory of it and the processes it starts (the report's
# slowdown model runs in one of its own), summed every 0.25 s (a sum costs
# 10-15 ms of a CPU).
timed <- function(script, what, dir) {
  rscript <- file.path(R.home("bin"), "Rscript")
  job <- parallel::mcparallel(suppressWarnings(system2(rscript,
    c(shQuote(script), "--time", what, shQuote(dir)), stdout = TRUE, stderr = FALSE)))
  tree_peak <- 0
  repeat {
    done <- parallel::mccollect(job, wait = FALSE, timeout = 0.25)
    if (!is.null(done)) break
    tree_peak <- max(tree_peak, descendants_pss_mib(job$pid))
  }
  out <- done[[1]]
  if (!is.character(out) || !is.null(attr(out, "status"))) {
    stop(sprintf("%s of %s failed", what, dir), call. = FALSE)
  }
  measured <- as.numeric(strsplit(trimws(out[length(out)]), " ")[[1]])
  c(measured[1], max(measured[2], tree_peak), measured[3])
}

# The memory (MiB) of the processes descended from pid, pid left out
# (/proc/PID/stat: its parent the 4th field): each one's proportional set
# size (/proc/PID/smaps_rollup's Pss), so that the pages a forked process
# shares with its parent count once, not once a process.
descendants_pss_mib <- function(pid) {
  stats <- lapply(list.files("/proc", "^[0-9]+$", full.names = TRUE), function(p) {
    # a process may end meanwhile
    line <- tryCatch(suppressWarnings(readLines(file.path(p, "stat"), warn = FALSE)),
      error = function(e) "")
    fields <- strsplit(sub(".*\\) ", "", line), " ")[[1]]
    if (length(fields) < 22) return(NULL)
    c(pid = as.numeric(basename(p)), ppid = as.numeric(fields[2]))
  })
  procs <- do.call(rbind, Filter(Negate(is.null), stats))
  tree <- pid
  repeat {
    grown <- union(tree, procs[procs[, "ppid"] %in% tree, "pid"])
    if (length(grown) == length(tree)) break
    tree <- grown
  }
  kib <- vapply(setdiff(tree, pid), function(p) {
    # a process may end meanwhile
    tryCatch(suppressWarnings(proc_kib(sprintf("/proc/%d/smaps_rollup", p), "Pss")),
      error = function(e) NA_real_)
  }, numeric(1))
  sum(kib, na.rm = TRUE) / 1024
}

# A "Field:   N kB" line of a /proc file (status, meminfo, smaps_rollup), in
# KiB: the package's reader, the one the report sizes its workers with
proc_kib <- noisebench:::proc_kib
