#!/usr/bin/env python3
"""A kernel's sweep as the catalogue gives it (src/kernels/kernels.json,
sweep and sweep_options), for JUBE's one kernel step (include/sweep.xml).

    sweep.py values CATALOGUE KERNEL PRESET ARCH KEY CHOSEN [WORK]

prints KEY's values for KERNEL, comma separated: a workpackage each. They are
CHOSEN where the user set it in parameters.xml, else the acceptance entry's
(PRESET acceptance), else the kernel's sweep. A kernel without KEY, and every
kernel under PRESET quick, gets one empty value, so that a sweep of one
kernel's option does not repeat the others' workpackages.

    sweep.py args CATALOGUE KERNEL PRESET KEY=VALUE...

prints the kernel's options of one workpackage: the catalogue's quick_args
under PRESET quick, else the option of each key of its sweep, in order."""
import json
import sys


def values(catalogue, kernel, preset, arch, key, chosen, work=""):
    sweep = catalogue["kernels"][kernel].get("sweep", {})
    if key not in sweep or preset == "quick":
        return ""
    if chosen:
        return chosen
    if preset == "acceptance" and key in catalogue["acceptance"][kernel]:
        return str(catalogue["acceptance"][kernel][key])
    default = sweep[key]
    if key == "work" and default is None:
        # every work kind that builds on each of the nodes' processors
        archs = set(arch.split(","))
        return ",".join(kind for kind, info in catalogue["work_kinds"].items()
                        if archs <= set(info.get("arch", archs)))
    if key == "work_bits" and default is None:
        bits = catalogue["kernels"][kernel]["work_bits"]
        return str(bits.get(work, bits["default"]))
    return ",".join(map(str, default if isinstance(default, list) else [default]))


def args(catalogue, kernel, preset, chosen):
    entry = catalogue["kernels"][kernel]
    if preset == "quick":
        return " ".join(entry["quick_args"])
    options, sweep = catalogue["sweep_options"], entry.get("sweep", {})
    missing = [key for key in sweep if not chosen.get(key)]
    if missing:
        raise SystemExit(f"sweep.py: no value for {', '.join(missing)} of {kernel}'s sweep")
    return " ".join(f"{options[key]} {chosen[key]}" for key in sweep)


USAGE = ("usage: sweep.py values CATALOGUE KERNEL PRESET ARCH KEY CHOSEN [WORK]\n"
         "       sweep.py args CATALOGUE KERNEL PRESET KEY=VALUE...")


def main(argv):
    if len(argv) < 4 or argv[0] not in ("values", "args") or \
            (argv[0] == "values" and len(argv) not in (7, 8)) or \
            (argv[0] == "args" and not all("=" in a for a in argv[4:])):
        print(USAGE, file=sys.stderr)
        sys.exit(2)
    what, path, kernel, preset, *rest = argv
    with open(path) as f:
        catalogue = json.load(f)
    if kernel not in catalogue["kernels"]:
        print(f"sweep.py: {path} has no kernel {kernel}", file=sys.stderr)
        sys.exit(2)
    if what == "values":
        print(values(catalogue, kernel, preset, *rest), end="")
    else:
        print(args(catalogue, kernel, preset, dict(a.split("=", 1) for a in rest)), end="")


if __name__ == "__main__":
    main(sys.argv[1:])
