# The machine's levels above the node: where the nodes sit (xnames, a
# site's file, Slurm's topology.conf), and the outliers found at each level:
# a planted bad cabinet, chassis, node and core are each one line, and
# nothing else is.

test_that("xnames place nodes in cabinets and chassis", {
  p <- node_locations(c("x1000c0s0b0n0", "x1000c1s7b1n1", "x1001c0s1b0n0.hsn", "login1"))
  expect_equal(names(p), c("host", "cabinet", "chassis"))
  expect_equal(p$cabinet, c("x1000", "x1000", "x1001", NA))
  expect_equal(p$chassis, c("x1000c0", "x1000c1", "x1001c0", NA))
  # one cabinet, one chassis: levels of one unit tell nothing
  expect_equal(names(node_locations(c("x1000c0s0b0n0", "x1000c0s0b0n1"))), "host")
  expect_equal(names(node_locations(c("nid001", "nid002"))), "host")
  # host names that are nid numbers: the xname the node's run read
  p <- node_locations(c("nid001", "nid002", "nid003"),
    xnames = data.table(host = c("nid001", "nid002"), xname = c("x3000c0s1b0n0", "x3001c2s1b0n1")))
  expect_equal(p$chassis, c("x3000c0", "x3001c2", NA))
})

test_that("a site's file places nodes, a chassis named alike in two cabinets kept apart", {
  f <- file.path(withr_tempdir(), "locations.csv")
  writeLines(c("host,cabinet,chassis", "n1,A,c0", "n2,A,c1", "n3,B,c0", "n4,B,c1"), f)
  p <- node_locations(c("n1", "n2", "n3", "n4", "n5"), locations = f)
  expect_equal(p$chassis, c("A/c0", "A/c1", "B/c0", "B/c1", NA))
  writeLines(c("host,cabinet", "n1,A", "n1,B"), f)
  expect_error(node_locations("n1", locations = f), "locations.csv:3: host n1 is placed twice")
  writeLines(c("name,cabinet", "n1,A"), f)
  expect_error(node_locations("n1", locations = f), "wants a header of host")
})

test_that("Slurm's topology.conf places nodes under their switch and its parent", {
  expect_equal(expand_hostlist("nid[008-010,012],login1,r[1-2]n[1-2]-ib"),
    c("nid008", "nid009", "nid010", "nid012", "login1", "r1n1-ib", "r1n2-ib", "r2n1-ib",
      "r2n2-ib"))
  f <- file.path(withr_tempdir(), "topology.conf")
  writeLines(c("# two groups of leaf switches under one root",
    "SwitchName=s0 Nodes=nid[01-02]", "SwitchName=s1 Nodes=nid[03-04]",
    "SwitchName=s2 Nodes=nid[05-06]  # a comment", "SwitchName=g0 Switches=s[0-1]",
    "SwitchName=g1 Switches=s2 LinkSpeed=100", "SwitchName=top Switches=g[0-1]"), f)
  p <- node_locations(sprintf("nid%02d", 1:6), topology = f)
  expect_equal(names(p), c("host", "switch group", "switch"))
  expect_equal(p$switch, c("s0", "s0", "s1", "s1", "s2", "s2"))
  expect_equal(p[["switch group"]], c("g0", "g0", "g0", "g0", "g1", "g1"))
  writeLines(c("SwitchName=s0 Nodes=a[1-2]", "SwitchName=s1 Nodes=a2"), f)
  expect_error(node_locations("a1", topology = f), "node a2 is under two switches")
})

# cabinets x chassis x nodes x cores FWQ ranks on xname hosts, losing 2% of
# their time but for the planted: a cabinet, a chassis of another, a node of
# a third and a core of a fourth losing 30%. nids: the hosts named nid0001,
# ..., their xnames in their machines' descriptions, as on Frontier.
level_survey <- function(n = 4000, nids = FALSE, env = parent.frame()) {
  grid <- CJ(cabinet = 1000:1005, chassis = 0:3, node = 0:1, cpu = 0:3)
  grid[, xname := sprintf("x%dc%ds0b0n%d", cabinet, chassis, node)]
  grid[, host := if (nids) sprintf("nid%04d", match(xname, unique(xname))) else xname]
  bad <- grid$cabinet == 1002 | (grid$cabinet == 1004 & grid$chassis == 1) |
    grid$xname == "x1000c2s0b0n1" | (grid$xname == "x1005c3s0b0n0" & grid$cpu == 1)
  share <- ifelse(bad, 0.3, 0.02)
  dir <- withr_tempdir(env)
  write_fwq(dir, "fwq", lapply(seq_len(nrow(grid)), function(i) fwq_ticks(n, share[i], i)),
    hosts = grid$host, cpus = grid$cpu,
    fields = lapply(share, function(x) list(stolen_percent = 100 * x, slowdown_percent = 0)))
  # a machine a host, as a run of many nodes describes them
  meta <- jsonlite::fromJSON(file.path(dir, "fwq.json"), simplifyVector = FALSE)
  meta$machines <- lapply(unique(grid$host), function(h) {
    modifyList(synthetic_machine, list(hostname = h, xname = grid$xname[match(h, grid$host)]))
  })
  write_json_run(dir, "fwq", meta)
  dir
}

test_that("a bad cabinet, chassis, node and core are a line each, and nothing else", {
  runs <- read_results(level_survey())$runs
  summary <- noise_summary(runs$fwq, "fwq")
  places <- node_locations(summary$host)
  o <- outlier_table(runs, summary, lapply(runs, stretch_yardsticks),
    cause_shares(runs), places)
  expect_equal(o$scope, c("cabinet", "chassis", "node", "core"))
  expect_equal(o$location, c("x1002", "x1004c1", "x1000c2", "x1005c3"))
  expect_equal(o$host, c(NA, NA, "x1000c2s0b0n1", "x1005c3s0b0n0"))
  expect_equal(o$cpu, c(NA, NA, NA, 1L))
  expect_equal(o$ranks, c(32L, 8L, 4L, 1L))
  expect_true(all(o$robust_z > outlier_z))
  expect_equal(o$noise_percent, rep(30, 4), tolerance = 0.05)
  # without the levels, the cabinet's and the chassis's nodes are nodes
  flat <- outlier_table(runs, summary, lapply(runs, stretch_yardsticks),
    cause_shares(runs))
  expect_equal(sum(flat$scope == "node"), 8 + 2 + 1)
  expect_true(all(is.na(flat$location)))
})

test_that("the machine map draws a tile a node, a column a cabinet, blocks by chassis", {
  nodes <- data.table(host = sprintf("x%dc%ds0b0n%d", rep(c(1000, 1010, 1002), each = 4),
    rep(c(0, 0, 1, 1), 3), rep(0:1, 6)), noise_percent = 1:12)
  d <- machine_map_data(nodes, node_locations(nodes$host))
  expect_equal(levels(d$column), c("x1000", "x1002", "x1010"))
  expect_equal(d[column == "x1010"]$row, 1:4)
  expect_equal(d[column == "x1010"]$block, rep(c("x1010c0", "x1010c1"), each = 2))
  expect_null(machine_map_data(nodes, node_locations(c("a", "b"))))
})

test_that("a report of nodes the kernels read xnames of has the machine map and levels", {
  dir <- level_survey(nids = TRUE)
  page <- write_report(dir, pdf = FALSE)
  report <- dirname(page)
  expect_true(file.exists(file.path(report, "system-1.png")))
  expect_true(file.exists(file.path(report, "fwq-machine-map.png")))
  o <- fread(file.path(report, "outliers.csv"))
  expect_equal(o$scope, c("cabinet", "chassis", "node", "core"))
  expect_equal(o$location, c("x1002", "x1004c1", "x1000c2", "x1005c3"))
  expect_equal(o$host, c("", "", "nid0006", "nid0047"))
  html <- paste(readLines(page), collapse = "\n")
  expect_match(html, paste0("Worse than the others: cabinet x1002 \\(32 CPUs, 30% taken by the ",
    "system\\); chassis x1004c1 \\(8 CPUs, [^)]*\\); node nid0006 in x1000c2 \\("))
  expect_match(html, "a column a cabinet, a white outline a chassis")
  nodes <- fread(file.path(report, "nodes.csv"))
  expect_equal(names(nodes)[1:3], c("host", "cabinet", "chassis"))
})
