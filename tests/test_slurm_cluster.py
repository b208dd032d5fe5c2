"""The project's Slurm cluster: jobs run, and with --with-db, sacct knows them."""
import os
import subprocess
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_accounting_records_jobs(slurm):
    script = ROOT / "tests" / "slurm" / "cluster.sh"
    subprocess.run([script, "start", "--with-db"], check=True, capture_output=True, timeout=300)
    env = {**os.environ, **slurm}
    name = f"nb-{uuid.uuid4().hex[:8]}"
    subprocess.run(["srun", "-n", "1", "-J", name, "true"], env=env, check=True, timeout=60)
    subprocess.run(["srun", "-n", "1", "-J", name, "false"], env=env, timeout=60)
    states = []
    # slurmctld sends each job's start and its end to slurmdbd apart, within
    # seconds on an idle machine and later beside the sanitizer suite: wait
    # for both jobs' ends, a minute at most
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        out = subprocess.run(["sacct", "-n", "-X", "-P", "-S", "now-1hour", "--name", name,
                              "-o", "JobName,State,ExitCode"], env=env, capture_output=True,
                             text=True, check=True).stdout
        states = sorted(out.split())
        if len(states) == 2 and not any("|RUNNING|" in s or "|PENDING|" in s for s in states):
            break
        time.sleep(0.2)
    assert states == [f"{name}|COMPLETED|0:0", f"{name}|FAILED|1:0"]
