"""The C layers include downwards only (docs/architecture.md): a file may
include headers of its own layer and of the layers below it, never above."""
import re
import sys
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "src"
# bottom to top; `generated` is what CMake writes from the kernel catalogue
LAYERS = ["generated", "lib/base", "lib/hotpath", "work", "lib/system", "lib/inject",
          "lib/launch", "lib/output", "lib/trace", "kernels", "driver", "tools"]
GENERATED = {"cause_classes.h": "generated", "metrics_catalogue.h": "generated",
             "requirements_default.h": "generated",
             "kernel_files.h": "kernels"}
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
