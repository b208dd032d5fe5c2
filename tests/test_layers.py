"""The C layers include downwards only (docs/architecture.md): a file may
include headers of its own layer and of the layers below it, never above.
And no two files call each other, directly or round a loop: each file's
undefined symbols, read from the build's objects, point one way."""
import collections
import re
import subprocess
import sys
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "src"
# bottom to top; `generated` is what CMake writes from the kernel catalogue
LAYERS = ["generated", "lib/base", "lib/hotpath", "work", "lib/system", "lib/inject",
          "lib/launch", "lib/output", "lib/trace", "driver", "kernels", "tools"]
GENERATED = {"cause_classes.h": "generated", "metrics_catalogue.h": "generated",
             "requirements_default.h": "generated", "kernel_files.h": "generated"}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def layer_of(path):
    rel = path.relative_to(SRC).parent.as_posix()
    return rel if rel in LAYERS else None


def headers():
    found = dict(GENERATED)
    for layer in LAYERS:
        for h in (SRC / layer).glob("*.h") if (SRC / layer).is_dir() else []:
            assert h.name not in found, f"{h.name} in two layers"
            found[h.name] = layer
    return found


def test_every_source_is_in_a_layer():
    stray = [p.relative_to(SRC).as_posix() for p in SRC.rglob("*.[ch]") if layer_of(p) is None]
    assert not stray, f"not in a layer of {LAYERS}: {stray}"


def test_no_upward_include():
    where = headers()
    upward = []
    for path in SRC.rglob("*.[ch]"):
        own = LAYERS.index(layer_of(path))
        for name in INCLUDE.findall(path.read_text()):
            layer = where.get(Path(name).name)
            assert layer is not None, f"{path.relative_to(SRC)}: unknown header {name}"
            if LAYERS.index(layer) > own:
                upward.append(f"{path.relative_to(SRC)} includes {name} ({layer})")
    assert not upward, "\n".join(upward)


def test_the_check_sees_an_upward_include(tmp_path, monkeypatch):
    """The rule can fail: a base module that includes a launch header."""
    fake = tmp_path / "src"
    for layer in LAYERS[1:]:
        (fake / layer).mkdir(parents=True)
    (fake / "lib/launch/team.h").write_text("")
    (fake / "lib/base/json.c").write_text('#include "team.h"\n')
    monkeypatch.setattr(sys.modules[__name__], "SRC", fake)
    try:
        test_no_upward_include()
    except AssertionError as e:
        assert "lib/base/json.c includes team.h (lib/launch)" in str(e)
    else:
        raise AssertionError("an upward include went unnoticed")


def file_calls(build):
    """Which source file calls which, from the objects of every target:
    {caller: {callee, ...}} by the global symbols each defines and uses."""
    objects = {}
    for o in sorted((build / "src" / "CMakeFiles").glob("*.dir/**/*.c.o")):
        source = "/".join(o.relative_to(build / "src" / "CMakeFiles").parts[1:])[:-2]
        objects.setdefault(source, o)
    defined, used = collections.defaultdict(set), {}
    for source, o in objects.items():
        used[source] = set()
        for line in subprocess.run(["nm", str(o)], capture_output=True, text=True,
                                   check=True).stdout.splitlines():
            fields = line.split()
            if len(fields) == 3 and fields[1] in "TDBRC":
                defined[fields[2]].add(source)
            elif len(fields) == 2 and fields[0] == "U":
                used[source].add(fields[1])
    return {s: {d for u in us for d in defined.get(u, ()) if d != s} for s, us in used.items()}


def cycles(calls):
    """The loops of a call graph: its strongly connected parts of two files
    or more (Tarjan's), each sorted."""
    index, low, stack, found = {}, {}, [], []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(calls.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            part = []
            while not part or part[-1] != v:
                part.append(stack.pop())
            if len(part) > 1:
                found.append(sorted(part))

    for v in sorted(calls):
        if v not in index:
            visit(v)
    return found


def test_no_two_files_call_each_other(bin_dir):
    calls = file_calls(bin_dir.parent)
    assert len(calls) > 50, f"the objects of {bin_dir.parent} were not found"
    loops = cycles(calls)
    assert not loops, "files that call each other: " + "; ".join(" <-> ".join(c) for c in loops)


def test_the_check_sees_a_loop_of_calls():
    """The rule can fail: three files round a loop, and two apart from it."""
    calls = {"a.c": {"b.c"}, "b.c": {"c.c"}, "c.c": {"a.c", "d.c"}, "d.c": set(), "e.c": {"d.c"}}
    assert cycles(calls) == [["a.c", "b.c", "c.c"]]
    assert cycles({"x.c": {"y.c"}, "y.c": set()}) == []
