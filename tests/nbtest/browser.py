"""A page loaded in a real headless Chromium, driven over the DevTools
protocol: what failed to load, what the console reported, each image's
state, and a screenshot."""
import base64
import json
import os
import shutil
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path

import websocket

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


class Page:
    def __init__(self, ws):
        self.ws = ws
        self.next_id = 0
        self.events = []

    def call(self, method, **params):
        self.next_id += 1
        self.ws.send(json.dumps({"id": self.next_id, "method": method, "params": params}))
        while True:
            msg = json.loads(self.ws.recv())
            if msg.get("id") == self.next_id:
                if "error" in msg:
                    raise RuntimeError(f"{method}: {msg['error']}")
                return msg.get("result", {})
            self.events.append(msg)

    def wait_for(self, method, timeout=60):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if any(e.get("method") == method for e in self.events):
                return
            self.ws.settimeout(max(0.1, deadline - time.monotonic()))
            self.events.append(json.loads(self.ws.recv()))
        raise TimeoutError(f"no {method} within {timeout} s")

    def evaluate(self, expression):
        out = self.call("Runtime.evaluate", expression=expression, returnByValue=True)
        return out["result"].get("value")

    def errors(self):
        """Every load failure, uncaught exception and console error seen."""
        found = []
        for e in self.events:
            m, p = e.get("method"), e.get("params", {})
            if m == "Network.loadingFailed":
                found.append(f"load failed: {p.get('errorText')} ({p.get('requestId')})")
            elif m == "Runtime.exceptionThrown":
                found.append(f"exception: {p['exceptionDetails'].get('text')}")
            elif m == "Log.entryAdded" and p["entry"]["level"] == "error":
                found.append(f"log: {p['entry'].get('text')} {p['entry'].get('url', '')}")
            elif m == "Runtime.consoleAPICalled" and p.get("type") == "error":
                found.append(f"console: {p.get('args')}")
        return found


def open_page(path, width=1280, height=900):
    """Context manager: the file loaded in headless Chromium, as a Page."""
    return _Browser(Path(path).resolve(), width, height)


class _Browser:
    def __init__(self, path, width, height):
        self.path, self.width, self.height = path, width, height

    def __enter__(self):
        self.profile = tempfile.mkdtemp(prefix="nb-chromium-")
        self.proc = subprocess.Popen(
            [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
             "--remote-debugging-port=0", f"--user-data-dir={self.profile}",
             f"--window-size={self.width},{self.height}", "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        port_file = Path(self.profile) / "DevToolsActivePort"
        deadline = time.monotonic() + 60
        while not (port_file.exists() and port_file.read_text().strip()):
            if time.monotonic() > deadline or self.proc.poll() is not None:
                raise RuntimeError("chromium did not start its DevTools endpoint")
            time.sleep(0.1)
        port = port_file.read_text().split()[0]
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=30) as r:
            target = next(t for t in json.load(r) if t["type"] == "page")
        self.page = Page(websocket.create_connection(target["webSocketDebuggerUrl"],
                                                     timeout=60, suppress_origin=True))
        for domain in ("Page", "Network", "Runtime", "Log"):
            self.page.call(f"{domain}.enable")
        self.page.call("Emulation.setDeviceMetricsOverride", width=self.width,
                       height=self.height, deviceScaleFactor=1, mobile=False)
        self.page.call("Page.navigate", url=self.path.as_uri())
        self.page.wait_for("Page.loadEventFired")
        return self.page

    def __exit__(self, *exc):
        try:
            self.page.ws.close()
        finally:
            self.proc.terminate()
            self.proc.wait(timeout=30)
            shutil.rmtree(self.profile, ignore_errors=True)


def screenshot(page, out):
    """The viewport (the page's first screen) as PNG."""
    data = page.call("Page.captureScreenshot", format="png")["data"]
    Path(out).parent.mkdir(parents=True, exist_ok=True)
    tmp = f"{out}.tmp{os.getpid()}"
    Path(tmp).write_bytes(base64.b64decode(data))
    os.replace(tmp, out)


# A number in e-notation anywhere in a cell ("1.2e+04", "3e-06"), not a
# commit's hash ("dae9a5264e34")
E_NOTATION = r"(?<![\w.-])\d+(\.\d+)?[eE][+-]?\d+(?![\w.])"


def check_report_page(page, width, height):
    """What a reader of the report is promised, whatever its size: no error,
    no cell in e-notation, no table wider than the viewport, and the first
    screen holding the verdict in words and its figure. Returns the
    verdict's text."""
    import re
    assert page.errors() == []
    cells = page.evaluate("Array.from(document.querySelectorAll('td, th'))"
                          ".map(c => c.textContent)")
    assert cells, "a report without a table"
    bad = [c for c in cells if re.search(E_NOTATION, c)]
    assert bad == [], bad[:5]
    wide = page.evaluate("Array.from(document.querySelectorAll('table'))"
                         ".map(t => [t.querySelector('caption') ? "
                         "t.querySelector('caption').textContent : '', "
                         "t.getBoundingClientRect().right])")
    assert [t for t in wide if t[1] > width] == []
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    box = "(s => { const r = document.querySelector(s).getBoundingClientRect(); " \
          "return [r.top, r.bottom]; })"
    words = page.evaluate(f"{box}('#verdict .system .words')")
    picture = page.evaluate(f"{box}('#verdict .system img')")
    assert 0 <= words[0] < words[1] <= height, words
    assert 0 <= picture[0] < picture[1] <= height, picture
    assert page.evaluate("document.querySelector('#verdict .system img').naturalWidth") > 0
    return page.evaluate("document.querySelector('#verdict .system .words').innerText")


def check_pdf(pdf, out_dir):
    """report.pdf: A4 pages that a real renderer turns into images
    (pdftoppm); returns their paths."""
    info = subprocess.run(["pdfinfo", str(pdf)], capture_output=True, text=True, check=True)
    size = next(line for line in info.stdout.splitlines() if line.startswith("Page size"))
    # A4 is 595 x 842 points
    w, h = (float(x) for x in size.split(":")[1].split("pts")[0].split("x"))
    assert abs(w - 595) < 2 and abs(h - 842) < 2, size
    subprocess.run(["pdftoppm", "-r", "30", "-png", str(pdf), str(Path(out_dir) / "page")],
                   check=True, timeout=300)
    pages = sorted(Path(out_dir).glob("page-*.png"))
    assert len(pages) >= 2 and all(p.stat().st_size > 1000 for p in pages)
    return pages
