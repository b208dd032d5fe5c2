"""What a run leaves: Sequoia-format data files, the JSON, honest summaries."""
import json
import os
import subprocess

import numpy as np
import pytest
from nbtest import KERNELS, REPORT_R, WORK_KINDS, quick_args
from nbtest.kernel_files import load_run

NCPUS = len(os.sched_getaffinity(0))


def test_stdout_mode(run, tmp_path):
    res = run("ftq", "-s", "-n", 100, "-o", "s")
    assert res.returncode == 0, res.stderr
    lines = [l for l in res.stdout.splitlines() if l and l[0].isdigit()]
    assert len(lines) == 100 and all(len(l.split()) == 2 for l in lines)
    assert not list(tmp_path.glob("*.dat"))
    assert (tmp_path / "s.json").exists()


def test_a_single_threaded_run_names_its_files_as_the_sequoia_tools(run, tmp_path):
    """The Sequoia document's run, `ftq -o testrun -n 1000`, writes
    testrun_counts.dat and testrun_times.dat of 1000 lines each; with -t,
    even -t 1, each thread's files carry its number. The JSON names what
    was written, and the report reads it."""
    assert run("ftq", "-o", "testrun", "-n", 1000).returncode == 0
    assert run("fwq", "-o", "w", "-n", 500).returncode == 0
    assert run("ftq", "-t", 1, "-o", "t1", "-n", 100).returncode == 0
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == sorted(["testrun.json", "testrun_counts.dat", "testrun_times.dat",
                            "w.json", "w_times.dat", "t1.json", "t1_0_counts.dat",
                            "t1_0_times.dat"]), names
    for suffix in ("counts", "times"):
        assert len((tmp_path / f"testrun_{suffix}.dat").read_text().splitlines()) == 1000
    meta = json.loads((tmp_path / "testrun.json").read_text())
    assert meta["ranks"][0]["files"] == ["testrun_counts.dat", "testrun_times.dat"]
    done = subprocess.run(["Rscript", REPORT_R, tmp_path], capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]


def test_threaded_sequoia_aliases(bin_dir, tmp_path):
    for alias in ("t_fwq", "t_ftq"):
        res = subprocess.run([bin_dir / alias, "-n", "50", "-t", "1", "-o", alias],
                             cwd=tmp_path, capture_output=True, text=True)
        assert res.returncode == 0, res.stderr
        assert (tmp_path / f"{alias}_0_times.dat").exists()


def test_cpus_option_pins(run, tmp_path):
    last = max(os.sched_getaffinity(0))
    res = run("fwq", "--cpus", last, "-n", 100, "-o", "p")
    assert res.returncode == 0, res.stderr
    meta = json.loads((tmp_path / "p.json").read_text())
    assert [t["cpu"] for t in meta["ranks"]] == [last]


@pytest.mark.parametrize("work", WORK_KINDS)
def test_every_work_kind_runs(run, tmp_path, work):
    for kernel in ("fwq", "ftq"):
        res = run(kernel, "--work", work, "-n", 300, "-o", f"{kernel}_{work}")
        assert res.returncode == 0, res.stderr
        meta = json.loads((tmp_path / f"{kernel}_{work}.json").read_text())
        # one increment and its loop take less than a tick on a fast core
        assert meta["work"] == work and meta["ticks_per_work_loop_min"] > 0.1


@pytest.mark.timing
def test_daxpy_cost_follows_its_length(run, tmp_path):
    # Both lengths keep x and y in L1 (4 and 16 KiB), so 4 times the length is
    # about 4 times the cost (3.6-4.1 on a steady core); at 4096 doubles
    # (64 KiB) they spill and the cost grows faster. One calibration's least
    # sample is not always clean here: back to back, 256 doubles took 128-250
    # ticks a loop and 1024 took 467-980. The least of seven interleaved
    # calibrations of each is clean (their ratio 3.65 every time, idle or
    # under the bad-day load). The bounds are the geometric midpoints between the hypotheses:
    # length ignored (1), linear (4), quadratic (16). Even if every
    # calibration of one length ran at 60% speed, 4 would stay within them
    # and 1 and 16 outside.
    def cost(n):
        res = run("fwq", "--work", "daxpy", "--daxpy-len", n, "-n", 200, "-w", 4, "-o", "d")
        assert res.returncode == 0, res.stderr
        return json.loads((tmp_path / "d.json").read_text())["ticks_per_work_loop_min"]

    pairs = [(cost(256), cost(1024)) for _ in range(7)]
    least = [min(costs) for costs in zip(*pairs)]
    assert 2 < least[1] / least[0] < 8, pairs


def test_noise_info(bin_dir):
    res = subprocess.run([bin_dir / "noise-info", "--json"], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    info = json.loads(res.stdout)
    assert info["ticks_per_ns"] > 0 and info["timer_read_ns"] > 0
    assert info["timer_resolution_ns"] > 0 and info["min_measurable_ns"] > info["timer_read_ns"]
    # the timer read as minimum and median, fenced and as selfish reads it
    assert 0 < info["timer_read_min_ticks"] <= info["timer_read_median_ticks"]
    assert 0 < info["unfenced_read_min_ticks"] <= info["unfenced_read_median_ticks"]
    assert info["timer_read_mean_ticks"] == info["timer_read_ticks"]
    assert info["cpus_allowed"] == len(os.sched_getaffinity(0))
    assert "multiiter" in info["ticks_per_work_loop"]
    res = subprocess.run([bin_dir / "noise-info"], capture_output=True, text=True)
    assert res.returncode == 0 and "timer read:" in res.stdout and "ns" in res.stdout
    res = subprocess.run([bin_dir / "noise-info", "--ticks-per-ns", "2.5", "--json"],
                         capture_output=True, text=True)
    info = json.loads(res.stdout)
    assert info["ticks_per_ns"] == 2.5 and info["ticks_per_ns_source"] == "option"


def tails_of(loss_ns, seconds):
    """Type-1 percentiles, maximum and rates per hour of the losses, as
    src/lib/base/tails.h defines them (in us)."""
    x = np.sort(np.asarray(loss_ns, dtype=float))
    n = len(x)

    def pick(p):
        return x[max(int(np.ceil(p * n)) - 1, 0)] / 1e3

    return {"p50_us": pick(0.5), "p99_us": pick(0.99), "p99_9_us": pick(0.999),
            "p99_99_us": pick(0.9999), "max_us": x[-1] / 1e3,
            **{f"above_{t}us_per_hour": (x > t * 1e3).sum() / (seconds / 3600)
               for t in (10, 100, 1000)}}


@pytest.mark.parametrize("kernel", ["fwq", "ftq"])
def test_tails_are_the_data_files(kernel, run, tmp_path):
    # 300 us of every 2 ms busy: tails the percentiles must reach
    args = ["-w", 10] if kernel == "fwq" else ["--freq", 10000]
    res = run(kernel, "-t", 0, "-n", 5000, *args, "--inject", "2000:300", "-o", kernel)
    assert res.returncode == 0, res.stderr
    meta, threads = load_run(tmp_path / kernel)
    for entry, data in zip(meta["ranks"], threads):
        tpn = entry["ticks_per_ns"]
        if kernel == "fwq":
            t = data["times"].astype(float)
            want = tails_of((t - t.min()) / tpn, t.sum() / tpn / 1e9)
        else:
            c = data["counts"].astype(float)
            quantum_ns = meta["quantum_ticks"] / tpn
            want = tails_of((c.max() - c) / c.max() * quantum_ns, len(c) * quantum_ns / 1e9)
        got = entry["tails"]
        for key, value in want.items():
            assert got[key] == pytest.approx(value, rel=1e-6, abs=1e-6), (key, got, want)
        # a 300 us busy wait falls in one FWQ sample (~20 us of work), and
        # takes two 100 us FTQ quanta whole
        assert got["max_us"] > (250 if kernel == "fwq" else 99), got
        # the histogram on the run's fixed edges: every sample in it once,
        # in the bucket of its loss, as tails.loss defines the loss
        loss = got["loss"]
        values = data["times" if kernel == "fwq" else "counts"].astype(float)
        diff = loss["base"] - values if loss["falling"] else values - loss["base"]
        loss_ns = np.maximum(diff, 0) * (loss["us_per_unit"] * 1e3)
        want_samples, want_lost = histogram_of(loss_ns, meta["loss_histogram"]["edges_ns"])
        hist = got["histogram"]
        assert hist["samples"] == want_samples, (hist, want_samples)
        assert hist["lost_ns"] == pytest.approx(want_lost, rel=1e-6, abs=2), (hist, want_lost)
    # the run's histogram is its participants' summed
    run_hist = meta["loss_histogram"]
    assert run_hist["participants"] == len(meta["ranks"])
    ranks = [r["tails"]["histogram"] for r in meta["ranks"]]
    for key in ("samples", "lost_ns"):
        width = max(len(h[key]) for h in ranks)
        # each participant's lost_ns rounded to the ns, the sum once
        assert run_hist[key] == pytest.approx(
            [sum((h[key] + [0] * width)[b] for h in ranks) for b in range(width)],
            abs=len(ranks) if key == "lost_ns" else 0), key
    assert run_hist["seconds"] == pytest.approx(sum(r["tails"]["loss"]["seconds"]
                                                    for r in meta["ranks"]))


def test_psnap_stats_are_its_files(run, tmp_path):
    """P-SNAP measures ticks and writes ns: its stats, scaled to ns, are
    those of its files (each iteration rounded to the ns there)."""
    res = run("psnap", "-t", 0, "-n", 1000, "-g", 100, "-o", "p")
    assert res.returncode == 0, res.stderr
    meta, threads = load_run(tmp_path / "p")
    for entry, data in zip(meta["ranks"], threads):
        ns = data["times"].astype(float)
        s = entry["stats"]
        assert s["unit"] == "ns"
        assert s["min"] == pytest.approx(ns.min(), abs=0.5)
        assert s["max"] == pytest.approx(ns.max(), abs=0.5)
        assert s["mean"] == pytest.approx(ns.mean(), abs=0.5)
        assert s["std"] == pytest.approx(ns.std(ddof=1), rel=1e-3, abs=0.5)
        d = ns - ns.mean()
        m2 = (d ** 2).mean()
        assert s["kurtosis"] == pytest.approx((d ** 4).mean() / m2 ** 2, rel=1e-3)
        assert s["scaled_noise_mean"] == pytest.approx((ns.mean() - ns.min()) / ns.min(),
                                                       rel=1e-3, abs=1e-6)


@pytest.mark.parametrize("kernel", KERNELS)
def test_stretches_are_the_data_files(kernel, run, tmp_path):
    """Each participant's stretches (stretches.h): one width for the whole
    run that holds its longest participant's measurement, and each stretch
    the samples of the data files that ended in it (selfish: detours that
    began in it, with their time beyond an ordinary iteration)."""
    info = KERNELS[kernel]
    # a kernel that records detours records nearly every iteration at 101%:
    # many detours, on any machine, to place in the stretches
    many = ["--threshold", 101] if info["loss"] == "detours" else []
    res = run(kernel, "-t", 0, *quick_args(kernel), *many, "-o", kernel)
    assert res.returncode == 0, res.stderr
    meta, threads = load_run(tmp_path / kernel)
    widths = {e["stretches"]["width_s"] for e in meta["ranks"]}
    assert len(widths) == 1, widths
    width = widths.pop()
    longest = max((e["end_tick"] - e["start_tick"]) / e["ticks_per_ns"] / 1e9
                  for e in meta["ranks"])
    assert width * 100 == pytest.approx(longest, rel=1e-9)
    for entry, data in zip(meta["ranks"], threads):
        tpn = entry["ticks_per_ns"]
        kinds = [f["suffix"].removesuffix(".dat") for f in info["files"]]
        if info["loss"] == "detours":
            d = data[kinds[0]].reshape(-1, 2)
            value = (d[:, 1] - entry["min_iteration_ns"]).astype(float)
            end_s = d[:, 0] / 1e9
        elif info["fixed"] == "time":
            value = data[kinds[0]].astype(float)
            end_s = (data[kinds[1]] - meta["start_tick"]) / tpn / 1e9
        else:
            value = data[kinds[0]].astype(float)
            end_s = np.cumsum(value) / (tpn if info["value_unit"] == "ticks" else 1) / 1e9
        got = entry["stretches"]
        k = np.clip(np.ceil(end_s / width) - 1, 0, 99).astype(int)
        n = np.bincount(k, minlength=100)
        total = np.bincount(k, weights=value, minlength=100)
        used = len(got["n"])
        assert sum(got["n"]) == len(value)
        # the files round P-SNAP's and selfish's ticks to ns: a sample within
        # that rounding of a stretch's edge may fall either side, and moves
        # one count from a stretch to its neighbour (P-SNAP's times are a
        # running sum of rounded iterations: half a ns each)
        moved = np.abs(np.array(got["n"]) - n[:used]).sum()
        in_ns = info["value_unit"] == "ns"
        tiled_ns = in_ns and info["loss"] != "detours"
        rounding_s = 1e-9 * (1 + 0.5 * np.arange(1, len(value) + 1) if tiled_ns else 1)
        near_edge = np.abs(end_s - np.round(end_s / width) * width) <= rounding_s
        assert moved <= (2 * near_edge.sum() if in_ns else 0), \
            (moved, near_edge.sum(), got["n"], n.tolist())
        if moved == 0:
            assert got["sum"] == pytest.approx(total[:used].tolist(), rel=1e-6, abs=len(value)), \
                (got["sum"], total.tolist())
        assert n[used:].sum() == 0


def histogram_of(loss_ns, edges_ns):
    """Samples and summed loss (ns) a bucket: [0, edge 0), [edge k-1, edge k),
    [last edge, inf), the empty buckets beyond the last sample left out."""
    bucket = np.searchsorted(np.asarray(edges_ns, dtype=float), loss_ns, side="right")
    samples = np.bincount(bucket, minlength=len(edges_ns) + 1)
    lost = np.bincount(bucket, weights=loss_ns, minlength=len(edges_ns) + 1)
    used = int(np.nonzero(samples)[0][-1]) + 1
    return samples[:used].tolist(), lost[:used].tolist()
