"""The result lines the kernels print, and the ranks line's reduction of them."""
import pytest


def rank_lines(stdout):
    """The result lines a kernel prints, one a thread or rank."""
    return [line for line in stdout.splitlines() if line.startswith("rank kernel=")]


def summaries(stdout):
    """The key=value result lines a kernel prints, one dict per rank."""
    return [dict(f.split("=", 1) for f in line.split()[1:]) for line in rank_lines(stdout)]


RANK_LINE_PREFIX = ("kernel", "rank", "host", "cpu")


def _number(text):
    """A figure's number as the kernels' reduction reads it, or None."""
    try:
        return float(text[:-1] if text.endswith("%") else text)
    except ValueError:
        return None


def reduce_rank_lines(lines):
    """What src/lib/base/figures.c makes of result lines, computed here from
    the lines: {figure: text} of the ranks line, but the means as numbers."""
    numbers, words = {}, {}
    for line in lines:
        for token in line.split()[1:]:
            key, _, value = token.partition("=")
            if key in RANK_LINE_PREFIX:
                continue
            items = [item.partition(":") for item in value.split(",")]
            if _number(value) is not None:
                items = [(key, None, value)]
            elif all(name[:1].isalpha() and _number(v) is not None for name, _, v in items):
                items = [(f"{key}_{name}", None, v.rstrip("%")) for name, _, v in items]
            else:
                words.setdefault(key, value)
                numbers.setdefault(key, None)
                continue
            for name, _, text in items:
                x = _number(text)
                seen = numbers.setdefault(name, [])
                if x is not None and abs(x) != float("inf") and x == x:
                    seen.append((x, text.rstrip("%")))
    out = {}
    for key, seen in numbers.items():
        if seen is None:
            out[f"{key}_first"] = words[key]
        elif not seen:
            out.update({f"{key}_min": "nan", f"{key}_avg": float("nan"), f"{key}_max": "nan"})
        else:
            # the first of equal ones, as the line printed it
            out[f"{key}_min"] = min(seen, key=lambda s: s[0])[1]
            out[f"{key}_avg"] = sum(x for x, _ in seen) / len(seen)
            out[f"{key}_max"] = max(seen, key=lambda s: s[0])[1]
    return out


def ranks_line(stdout, kernel):
    """The run's ranks line (the catalogue's ranks_line) as {key: text}."""
    found = [line for line in stdout.splitlines() if line.startswith(f"ranks kernel={kernel} ")]
    assert len(found) == 1, f"{len(found)} ranks lines"
    return dict(token.split("=", 1) for token in found[0].split()[1:])


def check_ranks_line(stdout, kernel, lines):
    """The ranks line is the reduction of `lines`, figure by figure, in the
    order they came; returns it."""
    got = ranks_line(stdout, kernel)
    want = reduce_rank_lines(lines)
    assert int(got.pop("ranks")) == len(lines)
    assert got.pop("kernel") == kernel
    assert list(got) == list(want)
    for key, value in want.items():
        if key.endswith("_avg"):
            assert float(got[key]) == pytest.approx(value, rel=1e-5, abs=1e-12, nan_ok=True), key
        else:
            assert got[key] == value, key
    return got
