#!/usr/bin/env python3
"""A kernel's sweep as the catalogue gives it (src/kernels/kernels.json,
sweep and sweep_options), for JUBE's one kernel step (include/catalogue.xml).

    sweep.py points CATALOGUE KERNEL PRESET ARCH ["KEY=VALUES ..."]

prints the options of each point of KERNEL's sweep, comma separated: a
workpackage each. A key's values are those set in parameters.xml's sweep
(KEY=VALUES, comma separated), else the acceptance entry's (PRESET
acceptance), else the kernel's sweep. A key the kernel does not take is
left out, so a sweep of one kernel's option does not repeat the others'
workpackages. Under PRESET quick the one point is the quick_args.

    sweep.py option CATALOGUE OPTIONS KEY

prints KEY's value in a point's OPTIONS, or nothing (the tables' columns).

JUBE runs sweep_points() and option() in its own process (runpy), not a
Python a parameter and workpackage. JUBE stores every parameter in every
workpackage and rewrites them all after each one, a cost that grows with
the square of the workpackages: so a point is one parameter, not one a
key, and the user's values one more."""
import json
import sys


def values(catalogue, kernel, preset, arch, key, chosen, work):
    """KEY's values for one point, given the point's work kind."""
    if chosen:
        return chosen.split(",")
    if preset == "acceptance" and key in catalogue["acceptance"][kernel]:
        return [str(catalogue["acceptance"][kernel][key])]
    default = catalogue["kernels"][kernel]["sweep"][key]
    if key == "work" and default is None:
        # every work kind that builds on each of the nodes' processors
        archs = set(arch.split(","))
        return [kind for kind, info in catalogue["work_kinds"].items()
                if archs <= set(info.get("arch", archs))]
    if key == "work_bits" and default is None:
        bits = catalogue["kernels"][kernel]["work_bits"]
        return [str(bits.get(work, bits["default"]))]
    return [str(v) for v in (default if isinstance(default, list) else [default])]


def points(catalogue, kernel, preset, arch, chosen):
    """The options of every point of the kernel's sweep, in its order."""
    entry = catalogue["kernels"][kernel]
    if preset == "quick":
        return [" ".join(entry["quick_args"])]
    options = catalogue["sweep_options"]
    # the work kind first: work_bits follows it
    keys = sorted(entry.get("sweep", {}), key=lambda k: k != "work")
    found = [{}]
    for key in keys:
        found = [dict(point, **{key: v}) for point in found
                 for v in values(catalogue, kernel, preset, arch, key, chosen.get(key, ""),
                                 point.get("work", ""))]
    return [" ".join(f"{options[key]} {point[key]}" for key in entry.get("sweep", {}))
            for point in found]


def load(path, kernel):
    with open(path) as f:
        catalogue = json.load(f)
    if kernel not in catalogue["kernels"]:
        raise ValueError(f"{path} has no kernel {kernel}")
    return catalogue


def chosen_values(sweep):
    """{key: values} of "KEY=VALUES ..." (parameters.xml's sweep)."""
    pairs = sweep.split()
    bad = [p for p in pairs if "=" not in p or not p.split("=", 1)[1]]
    if bad:
        raise ValueError(f"not KEY=VALUES in the sweep: {' '.join(bad)}")
    return dict(p.split("=", 1) for p in pairs)


def sweep_points(path, kernel, preset, arch, sweep=""):
    """points(), comma separated, of the catalogue at path, with the
    values set in `sweep` ("KEY=VALUES ...")."""
    catalogue = load(path, kernel)
    chosen = chosen_values(sweep)
    unknown = sorted(set(chosen) - set(catalogue["sweep_options"]))
    if unknown:
        raise ValueError(f"no kernel sweeps {', '.join(unknown)} (kernels.json, sweep_options)")
    return ",".join(points(catalogue, kernel, preset, arch, chosen))


def option(path, options, key):
    """KEY's value in a point's options, or ""."""
    with open(path) as f:
        flag = json.load(f)["sweep_options"][key]
    words = options.split()
    return next((v for k, v in zip(words, words[1:]) if k == flag), "")


USAGE = ('usage: sweep.py points CATALOGUE KERNEL PRESET ARCH ["KEY=VALUES ..."]\n'
         "       sweep.py option CATALOGUE OPTIONS KEY")


def main(argv):
    if not ((argv[:1] == ["points"] and len(argv) in (5, 6))
            or (argv[:1] == ["option"] and len(argv) == 4)):
        print(USAGE, file=sys.stderr)
        sys.exit(2)
    try:
        if argv[0] == "points":
            print(sweep_points(*argv[1:]), end="")
        else:
            print(option(*argv[1:]), end="")
    except (ValueError, KeyError) as e:
        print(f"sweep.py: {e}", file=sys.stderr)
        sys.exit(2)

if __name__ == "__main__":
    main(sys.argv[1:])
