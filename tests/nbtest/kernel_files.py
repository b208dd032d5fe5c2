"""Reading what a kernel run wrote: its JSON and its data files."""
import csv
import io
import json
import re
from pathlib import Path

import numpy as np

from nbtest import ROOT


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


def part_bytes(directory, name, where=None):
    """A rank's file: the whole file of its own, or where ([offset, bytes])
    its part of its node's lies."""
    with open(Path(directory) / name, "rb") as f:
        if where:
            f.seek(where[0])
        return f.read(where[1] if where else -1)


def data_bytes(directory, entry):
    """{kind: bytes} of a rank's data files (its entry in the description):
    whole files of its own, or its ranges of its node's (file_ranges)."""
    ranges = entry.get("file_ranges") or [None] * len(entry["files"])
    return {name.rsplit("_", 1)[1].removesuffix(".dat"): part_bytes(directory, name, where)
            for name, where in zip(entry["files"], ranges)}


def load_run(prefix):
    """The JSON description and per-thread arrays of a kernel run."""
    prefix = Path(prefix)
    meta = load_description(prefix.with_suffix(".json"))
    threads = []
    for t in meta["ranks"]:
        threads.append({kind: np.loadtxt(io.BytesIO(text), dtype=np.int64, ndmin=1)
                        for kind, text in data_bytes(prefix.parent, t).items()})
    return meta, threads


def json_histogram(meta):
    """The JSON's iteration_histogram as stdout's lines give it: {bucket start
    (us): iterations} of the buckets used, and the overflow."""
    h = meta["iteration_histogram"]
    bins = {round(h["first_us"] + k * h["bucket_us"], 6): n for k, n in enumerate(h["counts"]) if n}
    return bins, h["overflow"]


def check_node_data(directory, ranks, kernel, prefix=None):
    """Asserts what the node data files of a run (node_files) must be: each
    rank's entry names its node's files, one a kind; in each file the ranks'
    ranges lie one after the other by rank from byte 0 and fill it; each
    range holds the rank's samples, one line each, ending in a newline; and
    no rank has a data file of its own. prefix: the run's -o, if not the
    kernel's name."""
    prefix = prefix or kernel
    catalogue = json.loads((ROOT / "src" / "kernels" / "kernels.json").read_text())
    spec = catalogue["kernels"][kernel]
    directory = Path(directory)
    by_file = {}
    for r in ranks:
        assert len(r["files"]) == len(spec["files"]) == len(r["file_ranges"]), r["rank"]
        for text in data_bytes(directory, r).values():
            assert text.count(b"\n") == r[spec["samples_per_rank"]], r["rank"]
            assert text == b"" or text.endswith(b"\n"), r["rank"]
    for f in range(len(spec["files"])):
        by_file.update(check_node_parts(directory, ranks, prefix,
                                        lambda r: (r["files"][f], r["file_ranges"][f])))
    assert not [p.name for p in directory.glob(f"{prefix}_[0-9]*_*.dat")]
    return by_file


def check_node_parts(directory, ranks, prefix, part):
    """Asserts that each rank's part of a kind (part(entry): the file and
    [offset, bytes]) lies in a node's file PREFIX_node<K>_*.dat, the ranks'
    ranges one after the other by rank from byte 0, filling it; returns each
    file's parts, (rank, offset, bytes) by rank."""
    by_file = {}
    for r in ranks:
        name, (offset, size) = part(r)
        assert re.fullmatch(rf"{prefix}_node\d+_\S+\.dat", name), name
        by_file.setdefault(name, []).append((r["rank"], offset, size))
    for name, parts in by_file.items():
        parts.sort()
        ends = [0] + [offset + size for _, offset, size in parts]
        assert [offset for _, offset, _ in parts] == ends[:-1], name
        assert ends[-1] == (Path(directory) / name).stat().st_size, name
    return by_file


def detours_of(directory, rank):
    """A selfish rank's detours, `start_ns length_ns` a row, from its own
    file or its range of its node's."""
    text = data_bytes(directory, rank)["detours"]
    return np.loadtxt(io.BytesIO(text), dtype=np.int64, ndmin=2)


def flatten(entry, path=""):
    """A rank's entry as its node's ranks table names its cells (kernels.json's
    node_files.ranks_about): {path: value} of its scalars, an object's keys
    joined by '.', an array's elements by their place from 1."""
    items = entry.items() if isinstance(entry, dict) else \
        ((str(k + 1), v) for k, v in enumerate(entry))
    cells = {}
    for key, value in items:
        name = f"{path}.{key}" if path else key
        if isinstance(value, (dict, list)):
            cells.update(flatten(value, name))
        else:
            cells[name] = value
    return cells


def check_ranks_tables(json_path):
    """Asserts that a run with node files (node_files) has beside each its
    ranks' table (ranks_files, in the same order): a header of every
    member's path, in the order they first come, then a row a rank in the
    order of the node file's entries, each cell its entry's value."""
    json_path = Path(json_path)
    meta = json.loads(json_path.read_text())
    catalogue = json.loads((ROOT / "src" / "kernels" / "kernels.json").read_text())
    suffix = catalogue["node_files"]["ranks_suffix"]
    assert [name.removesuffix(".json") + "_" + suffix for name in meta["node_files"]] == \
        meta["ranks_files"]
    for node_file, table in zip(meta["node_files"], meta["ranks_files"]):
        entries = [flatten(r) for r in json.loads((json_path.parent / node_file).read_text())["ranks"]]
        with open(json_path.parent / table, newline="") as f:
            rows = list(csv.reader(f))
        header, rows = rows[0], rows[1:]
        columns = list(dict.fromkeys(name for e in entries for name in e))
        assert header == columns, table
        assert header[:3] == catalogue["node_files"]["ranks_first_columns"]
        assert len(rows) == len(entries), table
        for row, entry in zip(rows, entries):
            for name, text in zip(header, row):
                value = entry.get(name)
                if value is None:
                    assert text == "", (table, entry["rank"], name)
                elif isinstance(value, bool):
                    assert text == str(value).lower(), (table, entry["rank"], name)
                elif isinstance(value, str):
                    assert text == value, (table, entry["rank"], name)
                else:
                    assert float(text) == value, (table, entry["rank"], name)
