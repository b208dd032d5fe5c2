#!/usr/bin/env python3
"""The timing tests that said "cannot tell today" in this `make test` or
`make test-load`, each with its count and its last reason
(tests/conftest.py writes the log, a line each time a test could not tell).

  scripts/cannot_tell.py [--rounds N] [--log FILE]

With --rounds N (test-load runs the timing tests N times), a test that
could not tell in every round fails: it never answered, so it tests
nothing on such a day. Exits 1 then, else 0."""
import argparse
import collections
import sys
from pathlib import Path

LOG = Path(__file__).resolve().parent.parent / ".cache" / "cannot-tell.log"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=0,
                        help="how many times each test ran (0: do not judge)")
    parser.add_argument("--log", type=Path, default=LOG, help=f"the log (default {LOG})")
    args = parser.parse_args()
    lines = args.log.read_text().splitlines() if args.log.exists() else []
    counts, reasons = collections.Counter(), {}
    for line in lines:
        test, _, reason = line.partition(": ")
        counts[test] += 1
        reasons[test] = reason
    print(f"cannot tell today: {len(lines)} time(s), {len(counts)} timing test(s)")
    never = []
    for test, n in sorted(counts.items()):
        of = f" of {args.rounds} rounds" if args.rounds else ""
        print(f"  {test}: {n}{of}; last: {reasons[test]}")
        if args.rounds and n >= args.rounds:
            never.append(test)
    for test in never:
        print(f"cannot tell: {test} never answered in {args.rounds} rounds", file=sys.stderr)
    return 1 if never else 0


if __name__ == "__main__":
    sys.exit(main())
