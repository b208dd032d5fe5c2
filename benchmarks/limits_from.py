#!/usr/bin/env python3
"""`noise-check --limits-from` on synthetic acceptance surveys of growing
size, against the floor of reading the same files (`wc -l`), in the same
run: its time should grow with the rank lines and stay a small multiple of
that floor, its memory with the nodes, not the ranks.

Each survey is one selfish run with node files (the layout beyond 4,096
ranks): NODES nodes of this machine's kind, RANKS ranks each, every rank's
entry a copy of a real one with its host, rank, detour share and longest
detour changed. The limits it prints are checked against the same figures
computed here (each node's worst CPU, 99th percentile over the nodes,
times 2).

    benchmarks/limits_from.py [BIN_DIR]      (default build/bin)
"""
import json
import math
import random
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BIN = Path(sys.argv[1] if len(sys.argv) > 1 else "build/bin").resolve()
SIZES = [(100, 64), (1000, 64), (300, 288), (1000, 288)]


def template(tmp):
    """A real run's PREFIX.json head and one rank entry line."""
    subprocess.run([str(BIN / "selfish"), "-t", "1", "--seconds", "0.1", "--warmup-ms", "0",
                    "--node-files", "-o", str(tmp / "tpl")], check=True, capture_output=True)
    head = json.loads((tmp / "tpl.json").read_text())
    line = next(x for x in (tmp / "tpl_node0.json").read_text().splitlines()
                if x.lstrip().startswith('{"rank":'))
    return head, line.strip().rstrip(",")


def survey(where, head, line, nodes, ranks, rng):
    """The survey's files; the limits they should give."""
    where.mkdir()
    machine = head["machines"][0]
    worst_lost, worst_detour = [], []
    for n in range(nodes):
        host = f"nid{n:05d}"
        lines = []
        lost = [rng.expovariate(1 / 0.3) for _ in range(ranks)]
        detour = [rng.expovariate(1 / 40.0) + 5 for _ in range(ranks)]
        for r in range(ranks):
            x = re.sub(r'"rank":\d+', f'"rank":{n * ranks + r}', line, count=1)
            x = re.sub(r'"host":"[^"]*"', f'"host":"{host}"', x, count=1)
            x = re.sub(r'"stolen_percent":[^,}]+', f'"stolen_percent":{lost[r]!r}', x)
            x = re.sub(r'("tails":\{.*?"max_us":)[^,}]+', rf'\g<1>{detour[r]!r}', x, count=1)
            lines.append("    " + x)
        worst_lost.append(max(lost))
        worst_detour.append(max(detour))
        (where / f"sf_node{n}.json").write_text(
            '{\n  "node": %d,\n  "host": "%s",\n  "ranks": [\n%s\n  ]\n}\n'
            % (n, host, ",\n".join(lines)))
    machines = [dict(machine, hostname=f"nid{n:05d}") for n in range(nodes)]
    desc = {k: v for k, v in head.items() if k not in ("ranks", "machines", "node_files")}
    desc.update(machines=machines, node_files=[f"sf_node{n}.json" for n in range(nodes)])
    (where / "sf.json").write_text(json.dumps(desc, indent=2))

    def p99(v):
        v = sorted(v)
        return v[max(0, math.ceil(0.99 * len(v)) - 1)]

    return min(100, max(0.01, 2 * p99(worst_lost))), max(10, math.ceil(2 * p99(worst_detour)))


def timed(cmd):
    start = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True, check=True)
    return time.perf_counter() - start, done.stdout


def main():
    rng = random.Random(1)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        head, line = template(tmp)
        print(f"{'nodes':>6} {'ranks':>9} {'MB':>6} {'limits-from':>12} {'wc -l':>8} {'ratio':>6} "
              f"{'max RSS':>9}")
        for nodes, ranks in SIZES:
            where = tmp / f"s{nodes}x{ranks}"
            want_lost, want_detour = survey(where, head, line, nodes, ranks, rng)
            files = sorted(str(p) for p in where.glob("*.json"))
            size = sum(Path(f).stat().st_size for f in files) / 1e6
            floor, _ = timed(["wc", "-l", *files])
            took, out = timed([str(BIN / "noise-check"), "--limits-from", str(where)])
            rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
            got = {f: b for f, _, b in (x.split() for x in out.splitlines()
                                        if not x.startswith("#"))}
            ok = (abs(float(got["stolen_percent"]) - want_lost) <= 0.005 * want_lost and
                  abs(float(got["max_loss_us"]) - want_detour) <= 1)
            print(f"{nodes:>6} {nodes * ranks:>9,} {size:>6.0f} {took:>10.2f} s {floor:>6.2f} s "
                  f"{took / floor:>6.1f} {rss:>6.0f} MiB{'' if ok else '  WRONG LIMITS'}")
            subprocess.run(["rm", "-rf", str(where)], check=True)


if __name__ == "__main__":
    main()
