# Where each node sits in the machine, above the node: the units a site's
# hardware groups its nodes in (cabinets, their chassis), so that a cause
# bigger than a node (a chassis whose controller polls, a cabinet on a noisy
# management switch) is found as one unit and drawn as one block. From, the
# first that names any host: a site's file of each node's place
# (--locations), Slurm's topology.conf (--topology: its switches), or HPE
# Cray xnames (x<cabinet>c<chassis>s<slot>b<board>n<node>, as on Frontier,
# LUMI and Aurora): the one each node's run read from /etc/cray/xname, or
# the host name itself.

#' Where each node sits: the machine's levels above the node
#'
#' \code{node_locations} gives each host its unit at each level of the machine above the node,
#' the largest first: from a site's file (\code{locations}), from Slurm's \file{topology.conf}
#' (\code{topology}: a node's switch and the switch above it), or from HPE Cray xnames in the host
#' names (cabinet \code{x1000}, chassis \code{x1000c1}). A level with one unit only tells nothing
#' and is left out; a unit's name is made unique by its parent's where two parents share it.
#'
#' @param hosts the host names.
#' @param locations a CSV file with a header: \code{host}, then one column a level, the largest
#'   first (\code{host,cabinet,chassis}).
#' @param topology Slurm's \file{topology.conf} (the tree plugin's \code{SwitchName=},
#'   \code{Nodes=}, \code{Switches=} lines).
#' @param xnames a table of \code{host} and \code{xname}: the xname each node's kernel run read
#'   from \file{/etc/cray/xname} (host names there are nid numbers); a host without one is read
#'   as an xname itself.
#' @return A table: \code{host}, then a column a level (none where nothing places the hosts).
#' @export
node_locations <- function(hosts, locations = NULL, topology = NULL, xnames = NULL) {
  hosts <- unique(hosts)
  placed <- if (!is.null(locations)) {
    read_locations(locations)
  } else if (!is.null(topology)) {
    read_topology(topology)
  } else {
    xname_levels(hosts, xnames)
  }
  out <- placed[data.table(host = hosts), on = "host"]
  level_cols <- setdiff(names(out), "host")
  for (i in seq_along(level_cols)) {
    unique_under(out, level_cols[i], if (i > 1) level_cols[i - 1])
  }
  informative <- level_cols[vapply(level_cols, function(l) uniqueN(stats::na.omit(out[[l]])) > 1,
    logical(1))]
  out[, c("host", informative), with = FALSE]
}

# The level names of node_locations' table, the largest first
location_levels <- function(locations) setdiff(names(locations), "host")

# A level's names prefixed by their parent's where one name sits under two
# parents (a chassis c0 in every cabinet), in place
unique_under <- function(d, level, parent) {
  if (is.null(parent)) return(invisible(d))
  known <- which(!is.na(d[[level]]))
  parents <- tapply(d[[parent]][known], d[[level]][known], function(p) length(unique(p)))
  if (any(parents > 1)) {
    set(d, known, level, paste0(d[[parent]][known], "/", d[[level]][known]))
  }
  invisible(d)
}

# HPE Cray xnames: x<cabinet>c<chassis>s<slot>b<board>n<node>, maybe with a
# domain after it
xname_pattern <- "^(x[0-9]+)(c[0-9]+)s[0-9]+b[0-9]+n[0-9]+([.].*)?$"

xname_levels <- function(hosts, xnames = NULL) {
  name <- if (is.null(xnames)) hosts else {
    given <- xnames$xname[match(hosts, xnames$host)]
    ifelse(is.na(given), hosts, given)
  }
  ok <- grepl(xname_pattern, name)
  if (!any(ok)) return(data.table(host = character()))
  cabinet <- sub(xname_pattern, "\\1", name[ok])
  data.table(host = hosts[ok], cabinet = cabinet,
    chassis = paste0(cabinet, sub(xname_pattern, "\\2", name[ok])))
}

read_locations <- function(path) {
  if (!file.exists(path)) stop_input(path, "no such locations file")
  d <- tryCatch(fread(path, colClasses = "character"),
    error = function(e) stop_input(path, paste("not a CSV file:", conditionMessage(e))))
  if (!"host" %in% names(d) || ncol(d) < 2) {
    stop_input(path, "wants a header of host and one column a level, the largest first", 1)
  }
  twice <- which(duplicated(d$host))
  if (length(twice)) {
    stop_input(path, sprintf("host %s is placed twice", d$host[twice[1]]), twice[1] + 1)
  }
  setcolorder(d, "host")[]
}

# Slurm's tree topology: each node's leaf switch (`switch`), and the switch
# that leaf hangs from (`switch group`); the root above every leaf drops out
# as a level of one unit.
read_topology <- function(path) {
  if (!file.exists(path)) stop_input(path, "no such topology file")
  lines <- sub("#.*", "", readLines(path, warn = FALSE))
  at <- which(grepl("[^[:space:]]", lines))
  fields <- lapply(lines[at], function(l) {
    kv <- strsplit(strsplit(trimws(l), "[[:space:]]+")[[1]], "=", fixed = TRUE)
    stats::setNames(vapply(kv, function(x) paste(x[-1], collapse = "="), ""),
      tolower(vapply(kv, `[`, "", 1)))
  })
  nodes <- rbindlist(Map(function(f, line) {
    if (is.na(f["switchname"])) stop_input(path, "a line without SwitchName=", line)
    if (is.na(f["nodes"])) return(NULL)
    data.table(host = expand_hostlist(f[["nodes"]]), switch = f[["switchname"]])
  }, fields, at))
  if (!nrow(nodes)) stop_input(path, "no switch lists nodes (Nodes=)")
  parents <- rbindlist(lapply(fields, function(f) {
    if (is.na(f["switches"])) return(NULL)
    data.table(switch = expand_hostlist(f[["switches"]]), group = f[["switchname"]])
  }))
  twice <- nodes$host[duplicated(nodes$host)]
  if (length(twice)) stop_input(path, sprintf("node %s is under two switches", twice[1]))
  out <- data.table(host = nodes$host,
    group = if (nrow(parents)) parents$group[match(nodes$switch, parents$switch)] else NA,
    switch = nodes$switch)
  setnames(out, "group", "switch group")[]
}

#' @rdname node_locations
#' @param list a Slurm host list: \code{nid[001-004,010],login1}.
#' @export
expand_hostlist <- function(list) {
  # commas inside brackets are ranges', between them names'
  parts <- regmatches(list, gregexpr("([^,\\[]|\\[[^]]*\\])+", list))[[1]]
  unlist(lapply(parts, function(p) {
    m <- regmatches(p, regexec("^([^\\[]*)\\[([^]]*)\\](.*)$", p))[[1]]
    if (!length(m)) return(p)
    ids <- unlist(lapply(strsplit(m[3], ",", fixed = TRUE)[[1]], function(r) {
      ends <- strsplit(r, "-", fixed = TRUE)[[1]]
      from <- as.integer(ends[1])
      to <- as.integer(ends[length(ends)])
      sprintf(paste0("%0", nchar(ends[1]), "d"), seq(from, to))
    }))
    # a second bracket after the first (rack[1-2]n[1-4]): each of its names
    rest <- if (nzchar(m[4])) expand_hostlist(m[4]) else ""
    as.vector(t(outer(paste0(m[2], ids), rest, paste0)))
  }))
}
