"""Every run's "tuning" object says what a tuner checks first, as the
machine has it: each figure is read here again from where the kernel read
it, and must agree."""
import gzip
import json
import os
import re
import subprocess
from pathlib import Path

import pytest
from nbtest import KERNELS, quick_args

ROOT = Path(__file__).resolve().parent.parent


def cpu_list(text):
    cpus = set()
    for part in text.strip().split(","):
        if part:
            lo, _, hi = part.partition("-")
            cpus.update(range(int(lo), int(hi or lo) + 1))
    return cpus


def kernel_config():
    release = os.uname().release
    boot = Path(f"/boot/config-{release}")
    if boot.exists():
        return boot.read_text()
    if Path("/proc/config.gz").exists():
        return gzip.decompress(Path("/proc/config.gz").read_bytes()).decode()
    return None


@pytest.mark.parametrize("kernel", KERNELS)
def test_the_tuning_object_agrees_with_the_machine(run, tmp_path, kernel):
    done = run(kernel, "-t", 0, *quick_args(kernel), "-o", "run")
    assert done.returncode == 0, done.stderr
    meta = json.loads((tmp_path / "run.json").read_text())
    t = meta["tuning"]
    measured = {p["cpu"] for p in meta["ranks"]}

    # the interrupts that can land on a measured CPU, and only those
    expected = set()
    for irq in Path("/proc/irq").iterdir():
        if not irq.name.isdigit():
            continue
        aff = irq / "effective_affinity_list"
        text = aff.read_text() if aff.exists() else (irq / "smp_affinity_list").read_text()
        expected.update((int(irq.name), c) for c in cpu_list(text) & measured)
    assert {(i["irq"], i["cpu"]) for i in t["irqs_on_measured_cpus"]} == expected

    config = kernel_config()
    if config is not None:
        hz = re.search(r"^CONFIG_HZ=(\d+)$", config, re.M)
        assert t["hz"] == (hz.group(1) if hz else "")
        assert t["no_hz_full"] == ("y" if "CONFIG_NO_HZ_FULL=y" in config else "n")
    thp = Path("/sys/kernel/mm/transparent_hugepage/enabled")
    if thp.exists():
        assert t["transparent_hugepages"] == re.search(r"\[(\w+)\]", thp.read_text()).group(1)
    running = any((p / "comm").read_text().strip() == "irqbalance"
                  for p in Path("/proc").iterdir() if p.name.isdigit() and (p / "comm").exists())
    assert t["irqbalance_running"] == running
    # the run-time knobs, as their files read
    for name, path in {"vm.stat_interval": "/proc/sys/vm/stat_interval",
                       "workqueue.cpumask": "/sys/devices/virtual/workqueue/cpumask",
                       "kernel.nmi_watchdog": "/proc/sys/kernel/nmi_watchdog"}.items():
        f = Path(path)
        assert t["knobs"][name] == (f.read_text().strip() if f.exists() else ""), name
    assert t["slurm_job_id"] == os.environ.get("SLURM_JOB_ID", "")
    assert t["mpi_library"] == ""  # the threads build
    assert t["compiler"]

    # the commit the binaries were built from
    head = subprocess.run(["git", "-C", ROOT, "rev-parse", "HEAD"], capture_output=True,
                          text=True)
    if head.returncode == 0:
        built = re.search(r"([0-9a-f]{12,})(-dirty)?$", t["noisebench_commit"])
        assert built and head.stdout.startswith(built.group(1)), t["noisebench_commit"]

    # each warning is on stderr too, one line each
    for w in t["warnings"]:
        assert f"{kernel}: warning: {w}" in done.stderr
