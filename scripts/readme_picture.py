#!/usr/bin/env python3
"""The README's picture, docs/img/report-first-screen.png, from a survey's
report: its first screen in headless Chromium at 1200 x 900. The PNG keeps
the version the page names (a tEXt chunk, "noisebench-version"), so that
tests/test_docs.py can fail when the picture is older than VERSION.

    scripts/readme_picture.py RESULTS_DIR [OUT.png]

RESULTS_DIR is what `make run` wrote (results/<host>-YYYYMMDD-HHMMSS/);
docs/releasing.md runs this at each release."""
import re
import struct
import subprocess
import sys
import tempfile
import zlib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
KEY = b"noisebench-version"


def version_on(page):
    """The version the page's footer line names ("noisebench X (commit C)")."""
    found = re.search(r"noisebench (\S+) \(commit ", page.read_text())
    if not found:
        sys.exit(f"readme_picture: {page}: no 'noisebench VERSION (commit ...)' line")
    return found[1]


def chunks(png):
    """A PNG's chunks after its signature, each whole (length to CRC)."""
    at = 8
    while at < len(png):
        (length,) = struct.unpack(">I", png[at:at + 4])
        yield png[at:at + 12 + length]
        at += 12 + length


def with_text(png, key, value):
    """png with one tEXt chunk key=value, after its header chunk (IHDR),
    in place of any it had of that key."""
    body = key + b"\0" + value.encode()
    text = struct.pack(">I", len(body)) + b"tEXt" + body + \
        struct.pack(">I", zlib.crc32(b"tEXt" + body))
    header, *rest = chunks(png)
    kept = [c for c in rest if not (c[4:8] == b"tEXt" and c[8:].startswith(key + b"\0"))]
    return png[:8] + header + text + b"".join(kept)


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__.split("\n\n")[1].strip())
    page = Path(sys.argv[1]) / "report" / "index.html"
    out = Path(sys.argv[2]) if len(sys.argv) == 3 else ROOT / "docs/img/report-first-screen.png"
    if not page.is_file():
        sys.exit(f"readme_picture: {page}: no report (make run writes one)")
    version = version_on(page)
    with tempfile.TemporaryDirectory() as tmp:
        shot = Path(tmp) / "shot.png"
        subprocess.run(["chromium", "--headless", "--no-sandbox", "--hide-scrollbars",
                        "--window-size=1200,900", f"--screenshot={shot}",
                        page.resolve().as_uri()],
                       check=True, capture_output=True, timeout=120)
        out.write_bytes(with_text(shot.read_bytes(), KEY, version))
    print(f"{out}: the first screen of {page}, noisebench {version}")


if __name__ == "__main__":
    main()
