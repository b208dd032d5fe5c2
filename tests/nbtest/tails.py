"""A run's tails against its data files: the percentiles, maximum and
rates per hour of the samples' losses (src/lib/base/tails.h), and the loss
histogram on the run's fixed edges, each participant's and the run's."""
import numpy as np
import pytest


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


def histogram_of(loss_ns, edges_ns):
    """Samples and summed loss (ns) a bucket: [0, edge 0), [edge k-1, edge k),
    [last edge, inf), the empty buckets beyond the last sample left out."""
    bucket = np.searchsorted(np.asarray(edges_ns, dtype=float), loss_ns, side="right")
    samples = np.bincount(bucket, minlength=len(edges_ns) + 1)
    lost = np.bincount(bucket, weights=loss_ns, minlength=len(edges_ns) + 1)
    used = int(np.nonzero(samples)[0][-1]) + 1
    return samples[:used].tolist(), lost[:used].tolist()


def check_tails_are_the_data_files(meta, threads, value_kind, loss_ns_and_seconds,
                                   least_max_us):
    """meta, threads: load_run's of a run on every CPU with injected busy
    waits. value_kind: the data file its noise is measured on.
    loss_ns_and_seconds(meta, entry, values): the samples' losses (ns) and
    the seconds they span, as the kernel defines them. least_max_us: what
    the longest loss must exceed, from what was injected."""
    for entry, data in zip(meta["ranks"], threads):
        values = data[value_kind].astype(float)
        want = tails_of(*loss_ns_and_seconds(meta, entry, values))
        got = entry["tails"]
        for key, value in want.items():
            assert got[key] == pytest.approx(value, rel=1e-6, abs=1e-6), (key, got, want)
        assert got["max_us"] > least_max_us, got
        # the histogram on the run's fixed edges: every sample in it once,
        # in the bucket of its loss, as tails.loss defines the loss
        loss = got["loss"]
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
