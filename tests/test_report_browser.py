"""The report in a real headless browser (Debian's Chromium): it loads
without errors, every image loads, the whole system and the summary are its
first screen and name runs by what they measured, every figure has a caption; and a
screenshot of the first screen is written (.cache/report-first-screen.png,
or NB_SCREENSHOT) for the docs."""
import os
import re
import subprocess

import pytest
from browser import CHROMIUM, open_page, screenshot
from conftest import ROOT

RUNS = {
    "fwq": ["-n", "3000"],
    "ftq": ["--freq", "10000", "-n", "10000"],
    "ftq7": ["--freq", "7000", "-n", "7000"],
    "psnap": ["-n", "300"],
    "selfish": ["--seconds", "1"],
}


@pytest.fixture(scope="module")
def report(bin_dir, tmp_path_factory):
    out = tmp_path_factory.mktemp("browser")
    for name, args in RUNS.items():
        kernel = re.sub(r"\d+$", "", name)
        (out / "runs" / name).mkdir(parents=True)
        done = subprocess.run([str(bin_dir / kernel), "-t", "0", *args, "-o", kernel],
                              cwd=out / "runs" / name, capture_output=True, text=True,
                              timeout=300)
        assert done.returncode == 0, done.stderr
    done = subprocess.run(["Rscript", str(ROOT / "analysis" / "report.R"), str(out)],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    return out / "report" / "index.html"


@pytest.fixture(scope="module")
def page(report):
    if CHROMIUM is None:
        pytest.fail("no chromium: scripts/setup.sh test installs it")
    with open_page(report) as p:
        yield p


def test_the_report_loads_without_errors(page):
    assert page.errors() == []
    assert page.evaluate("document.readyState") == "complete"


def test_every_image_loads(page, report):
    images = page.evaluate("Array.from(document.images).map(i => "
                           "[i.getAttribute('src'), i.complete, i.naturalWidth, i.naturalHeight])")
    written = sorted(p.name for p in report.parent.glob("*.png"))
    assert sorted(src for src, *_ in images) == written
    broken = [src for src, complete, w, h in images if not (complete and w > 0 and h > 0)]
    assert broken == []


def test_every_figure_has_a_caption_with_units(page):
    captions = page.evaluate("Array.from(document.querySelectorAll('figure')).map(f => "
                             "f.querySelector('figcaption') ? "
                             "f.querySelector('figcaption').textContent : '')")
    assert captions
    for c in captions:
        assert len(c) > 80 and re.search(r"\((us|s|Hz|%|counts\^2|log)\b|\(%|, log\)|\(s\)", c), c


def test_the_first_screen_is_the_whole_system_then_the_summary(page):
    # every CPU at a glance first, then the procurement summary, on the first screen
    first = page.evaluate("document.querySelector('#whole-system').getBoundingClientRect().top")
    top = page.evaluate("document.querySelector('#summary').getBoundingClientRect().top")
    assert 0 <= first < top < page.evaluate("window.innerHeight")
    system = page.evaluate("document.querySelector('#whole-system').innerText")
    assert "Every CPU of each run" in system and "Outliers" in system
    summary = page.evaluate("document.querySelector('#summary').innerText")
    for heading in ("Machines measured", "Sequoia criteria", "P-SNAP, PRACE style",
                    "Tails", "Predicted slowdown at scale"):
        assert heading in summary
    # runs by what they measured, not by their directories
    assert "FTQ multiiter 10 kHz" in summary and "FTQ multiiter 7 kHz" in summary
    assert "runs/ftq" not in summary
    assert re.search(r"at 10,000 processes and 1 ms phases .* \d+\.\d\dx uncoordinated", summary)


def test_a_screenshot_of_the_first_screen(page):
    out = os.environ.get("NB_SCREENSHOT", str(ROOT / ".cache" / "report-first-screen.png"))
    screenshot(page, out)
    with open(out, "rb") as f:
        head = f.read(24)
    assert head[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = int.from_bytes(head[16:20], "big"), int.from_bytes(head[20:24], "big")
    assert (width, height) == (1280, 900)
