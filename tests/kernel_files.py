"""Reading what a kernel run wrote: its JSON and its data files."""
import json
from pathlib import Path

import numpy as np


def load_description(json_path):
    """A run's JSON description with its ranks' entries under "ranks": its
    own, or those of the node files it lists (--node-files, or beyond 4096
    ranks), node by node."""
    json_path = Path(json_path)
    meta = json.loads(json_path.read_text())
    if "node_files" in meta:
        meta["ranks"] = [r for name in meta["node_files"]
                         for r in json.loads((json_path.parent / name).read_text())["ranks"]]
    return meta


def load_run(prefix):
    """The JSON description and per-thread arrays of a kernel run."""
    prefix = Path(prefix)
    meta = load_description(prefix.with_suffix(".json"))
    threads = []
    for t in meta["ranks"]:
        data = {}
        for name in t["files"]:
            kind = name.rsplit("_", 1)[1].removesuffix(".dat")
            data[kind] = np.loadtxt(prefix.parent / name, dtype=np.int64, ndmin=1)
        threads.append(data)
    return meta, threads


def json_histogram(meta):
    """The JSON's iteration_histogram as stdout's lines give it: {bucket start
    (us): iterations} of the buckets used, and the overflow."""
    h = meta["iteration_histogram"]
    bins = {round(h["first_us"] + k * h["bucket_us"], 6): n for k, n in enumerate(h["counts"]) if n}
    return bins, h["overflow"]
