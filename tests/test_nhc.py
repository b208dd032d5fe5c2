"""check_noise (site/nhc/noisebench.nhc) run by the real LBNL NHC: the
site's /usr/sbin/nhc where there is one, else the unmodified NHC 1.4.3
release beside the checkout (../shared/tools/nhc-1.4.3); skipped, counted,
where neither is. A quiet node passes; a CPU with a rival on it (put there
from outside the check) fails the check with noise-check's line for it,
which is what NHC writes into the node's drain reason."""
import os
import re
import shutil
import signal
import subprocess
from pathlib import Path

import pytest
from nbtest import ROOT
from nbtest.competitor import start_rival

RELEASE = ROOT.parent / "shared" / "tools" / "nhc-1.4.3"
SITE_NHC = Path("/usr/sbin/nhc")
NHC = SITE_NHC if SITE_NHC.exists() else RELEASE / "nhc" if (RELEASE / "nhc").exists() else None
SCRIPTS = (Path("/etc/nhc/scripts") if NHC == SITE_NHC else RELEASE / "scripts")
CPUS = sorted(os.sched_getaffinity(0))

pytestmark = pytest.mark.skipif(NHC is None, reason="no NHC: neither /usr/sbin/nhc nor "
                                f"{RELEASE} (the shared tools)")


def nhc_conf(bin_dir, conf_dir, line):
    """conf_dir as NHC's configuration directory: its common functions, the
    project's check and an nhc.conf of one check line."""
    (conf_dir / "scripts").mkdir(parents=True, exist_ok=True)
    shutil.copy(SCRIPTS / "common.nhc", conf_dir / "scripts")
    shutil.copy(ROOT / "site" / "nhc" / "noisebench.nhc", conf_dir / "scripts")
    (conf_dir / "nhc.conf").write_text(f"* || {line} -b {bin_dir / 'noise-check'}\n")


def nhc(bin_dir, conf_dir, line, cpus=None):
    """NHC with one check line, its own marking of the node off (no
    resource manager here), on `cpus` only if given."""
    nhc_conf(bin_dir, conf_dir, line)
    cmd = ["bash", str(NHC), "-D", str(conf_dir), "-c", str(conf_dir / "nhc.conf"), "-l", "-",
           "-t", "60", "MARK_OFFLINE=0"]
    if cpus is not None:
        cmd = ["taskset", "-c", ",".join(map(str, cpus)), *cmd]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120)


def test_a_quiet_node_passes(bin_dir, tmp_path):
    done = nhc(bin_dir, tmp_path, "check_noise -s 1 -p 100 -u 1e9")
    assert done.returncode == 0, done.stdout + done.stderr


def test_a_noisy_cpu_fails_the_check_with_its_line(bin_dir, tmp_path):
    noisy = CPUS[-1]
    rival = start_rival(bin_dir, noisy, "200:800", tmp_path / "slices.dat")
    try:
        # the check on the rival's CPU alone: 200 us slices, over a 100 us limit on any day
        done = nhc(bin_dir, tmp_path, "check_noise -s 1 -p 100 -u 100", cpus=[noisy])
    finally:
        rival.send_signal(signal.SIGTERM)
        rival.wait(timeout=30)
    out = done.stdout + done.stderr
    assert done.returncode != 0, out
    reason = rf"Health check failed:  noise: cpu{noisy} detour of \d+ us > 100 us"
    assert re.search(reason, out), out


def test_a_check_that_cannot_measure_says_why(bin_dir, tmp_path):
    done = nhc(bin_dir, tmp_path, "check_noise -s 0")
    out = done.stdout + done.stderr
    assert done.returncode != 0
    assert "check_noise:  noise-check cannot measure:" in out and "--seconds 0" in out, out
