"""A synthetic survey of any size (benchmarks/survey.R), drawn from a real
FWQ run of this machine: survey.R writes FWQ's files, as fwq_mpi does."""
import subprocess

from nbtest import ROOT


def synthetic_survey(bin_dir, out, hosts, per_host, samples):
    """out/survey: hosts x per_host ranks of `samples` samples each."""
    source = out / "source"
    source.mkdir()
    done = subprocess.run([str(bin_dir / "fwq"), "-t", "1", "-n", "2000", "-o", "fwq"],
                          cwd=source, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    done = subprocess.run(["Rscript", str(ROOT / "benchmarks" / "survey.R"),
                           str(source / "fwq.json"), str(out / "survey"), str(hosts),
                           str(per_host), str(samples)],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    return out / "survey"
