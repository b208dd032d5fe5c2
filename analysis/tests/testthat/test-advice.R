# From why to how: each cause named by the trace gets the rule of the
# catalogue that moves it, this machine's setting, and a command where it
# can be moved at run time.

test_that("each cause finds its rule, the first that matches", {
  rules <- advice_rules()
  knob <- function(class, name) rules[[advice_rule_of(class, name)]]$knob
  expect_match(knob("thread", "kworker/1:3:vmstat_update"), "vm.stat_interval")
  expect_match(knob("thread", "kworker/u8:1:wb_workfn"), "workqueue/cpumask")
  expect_match(knob("thread", "rcu_preempt:15"), "rcu_nocbs")
  expect_match(knob("thread", "noise-slowdown:4242"), "taskset")
  expect_match(knob("timer", "tick_nohz_handler"), "nohz_full")
  expect_match(knob("irq", "41:virtio3-rx"), "smp_affinity_list")
  expect_match(knob("hardware", "-"), "BIOS")
  # every class of the catalogue has a rule
  expect_true(all(!is.na(advice_rule_of(cause_classes, rep("x", length(cause_classes))))))
})

test_that("a thread or an interrupt gets the command that moves it to the CPUs not measured", {
  rules <- advice_rules()
  rule <- function(class, name) rules[[advice_rule_of(class, name)]]
  expect_equal(advice_action(rule("thread", "noise-slowdown:4242"), "noise-slowdown:4242", "0"),
    "taskset -a -c -p 0 4242")
  expect_equal(advice_action(rule("irq", "41:virtio3-rx"), "41:virtio3-rx", "0,2-3"),
    "echo 0,2-3 > /proc/irq/41/smp_affinity_list")
  # no CPU left to move it to, or no PID in the name: no command
  expect_equal(advice_action(rule("thread", "x:1"), "x:1", ""), "")
  expect_equal(advice_action(rule("thread", "kdamond"), "kdamond", "0"), "")
  expect_equal(cpu_list_text(c(0, 1, 2, 5, 7, 8)), "0-2,5,7-8")
})

test_that("the settings read as a tuning guide writes them", {
  expect_equal(setting_words(c("vm.stat_interval", "nohz_full", "irqbalance"),
    c("1", "not set", "irqbalance running")),
    c("vm.stat_interval = 1", "nohz_full=not set", "irqbalance running"))
})

test_that("the CPUs not measured are those no run of the survey measured", {
  # a survey of a 4-CPU machine: one run on CPU 0, one on CPUs 0 and 1
  dir <- withr_tempdir()
  dir.create(file.path(dir, "one"))
  dir.create(file.path(dir, "two"))
  write_fwq(file.path(dir, "one"), "fwq", list(1000 + 0:9), cpus = 0L)
  write_fwq(file.path(dir, "two"), "fwq", list(1000 + 0:9, 1000 + 0:9), cpus = 0:1)
  runs <- read_results(dir)$runs
  for (n in names(runs)) runs[[n]]$meta$machine$cpus_online <- 4L
  expect_equal(housekeeping_cpus(runs[[1]]), "1-3")
  expect_equal(housekeeping_cpus(runs), "2-3")
  expect_equal(unname(current_settings(runs[[1]], runs)["housekeeping"]),
    "CPUs not measured: 2-3")
  # every CPU measured by one run or another: nowhere to move work to
  for (n in names(runs)) runs[[n]]$meta$machine$cpus_online <- 2L
  expect_equal(housekeeping_cpus(runs), "")
  expect_equal(unname(current_settings(runs[[1]], runs)["housekeeping"]),
    "every CPU was measured")
})
