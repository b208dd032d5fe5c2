"""FTQ's figures through JUBE's FTQ table: each workpackage of its
frequency sweep a row, its figures the run's own (test_fwq_doors.py does
the same for FWQ's table)."""
import json
import os

import pytest
from nbtest.jube_runs import project_copy, result_rows, run_to_end, workpackage_dirs

pytestmark = [pytest.mark.harness,
              pytest.mark.skipif(bool(os.environ.get("NB_SANITIZE")),
                                 reason="JUBE drives the release build")]


def test_local_ftq_sweep_reports_each_workpackage(tmp_path):
    jube_dir = project_copy(tmp_path, cores=[1, 2], frequency_hz=[10000, 7000], seconds=1)
    handle = run_to_end(jube_dir, "ftq", env={})
    rows = result_rows(handle, "ftq")
    assert sorted((int(r["frequency_hz"]), int(r["cores"])) for r in rows) == [
        (7000, 1), (7000, 2), (10000, 1), (10000, 2)]
    worst, line = {}, {}
    for work in workpackage_dirs(handle, "kernel"):
        meta = json.loads((work / "ftq.json").read_text())
        key = (round(meta["frequency_hz"]), len(meta["ranks"]))
        worst[key] = max(rank["stats"]["scaled_noise_mean"] for rank in meta["ranks"])
        line[key] = max((rank["spectrum"]["share_percent"] or [0])[0] for rank in meta["ranks"])
    for r in rows:
        assert r["job_id"] == "local" and r["status"] == "ok"
        # the table's figures are the run's: as many samples as its files
        # hold, its worst thread's noise (whatever the machine's own is)
        assert int(r["samples"]) == int(r["frequency_hz"]) * int(r["cores"])
        measured = worst[(int(r["frequency_hz"]), int(r["cores"]))]
        assert 0 <= measured < 1
        assert float(r["scaled_noise_mean_max"]) == pytest.approx(measured, rel=1e-3)
        # and the strongest of the threads' own spectral lines
        strongest = line[(int(r["frequency_hz"]), int(r["cores"]))]
        assert float(r["strongest line (%)"]) == pytest.approx(strongest, rel=1e-2, abs=1e-3)
        assert float(r["mean_counts_avg"]) > 0
    lines = {}
    for work in workpackage_dirs(handle, "kernel"):
        files = list(work.glob("ftq_*_counts.dat"))
        lines[work] = sum(len(f.read_text().splitlines()) for f in files)
    assert sorted(lines.values()) == sorted(int(r["samples"]) for r in rows)
    # the build step compiled this checkout, and the report covers the run
    assert (handle / "000000" / "000000_build" / "work" / "out" / "bin" / "ftq").exists()
    assert (handle / "000000" / "report" / "index.html").exists()
