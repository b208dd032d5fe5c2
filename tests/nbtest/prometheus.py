"""Debian's prometheus-node-exporter and prometheus, started on free ports of
127.0.0.1 for a test and stopped after it: the node_exporter reads a
textfile directory alone, the Prometheus scrapes it every second and
evaluates the site's rules (site/prometheus/) every second."""
import contextlib
import json
import shutil
import socket
import subprocess
import time
import urllib.parse
import urllib.request

import pytest


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def get(url):
    with urllib.request.urlopen(url, timeout=10) as r:
        return r.read().decode()


@contextlib.contextmanager
def serving(cmd, url, name):
    """cmd running until the block ends, once url answers (30 s at most)."""
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                get(url)
                break
            except OSError:
                assert proc.poll() is None, proc.stderr.read()
                assert time.monotonic() < deadline, f"{name} did not come up in 30 s"
                time.sleep(0.1)
        yield
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def program(name):
    exe = shutil.which(name)
    if exe is None:
        pytest.fail(f"no {name}: scripts/setup.sh test installs it")
    return exe


@contextlib.contextmanager
def node_exporter(textfiles):
    """Its textfile collector alone, over textfiles; yields (its address,
    scrape()): scrape returns its /metrics page."""
    address = f"127.0.0.1:{free_port()}"
    url = f"http://{address}/metrics"
    with serving([program("prometheus-node-exporter"), f"--web.listen-address={address}",
                  "--collector.disable-defaults", "--collector.textfile",
                  f"--collector.textfile.directory={textfiles}"], url, "node_exporter"):
        yield address, lambda: get(url)


class Prometheus:
    """A Prometheus's HTTP API: instant queries and the alerts' states."""

    def __init__(self, url):
        self.url = url

    def api(self, path, **params):
        answer = json.loads(get(f"{self.url}/api/v1/{path}?{urllib.parse.urlencode(params)}"))
        assert answer["status"] == "success", answer
        return answer["data"]

    def query(self, expr):
        return self.api("query", query=expr)["result"]

    def firing(self):
        """{(alertname, cpu or ""): labels} of the alerts firing now."""
        return {(a["labels"]["alertname"], a["labels"].get("cpu", "")): a["labels"]
                for a in self.api("alerts")["alerts"] if a["state"] == "firing"}

    def wait_for(self, done, what, seconds=60):
        """Polls done() until true; fails saying what did not happen."""
        deadline = time.monotonic() + seconds
        while not done():
            assert time.monotonic() < deadline, f"{what} not within {seconds} s: {self.firing()}"
            time.sleep(0.5)


@contextlib.contextmanager
def prometheus(workdir, target, rule_files):
    """Scraping target (host:port) and evaluating rule_files every second."""
    config = workdir / "prometheus.yml"
    config.write_text(json.dumps({
        "global": {"scrape_interval": "1s", "evaluation_interval": "1s"},
        "rule_files": [str(f) for f in rule_files],
        "scrape_configs": [{"job_name": "node", "static_configs": [{"targets": [target]}]}]}))
    address = f"127.0.0.1:{free_port()}"
    with serving([program("prometheus"), f"--config.file={config}",
                  f"--storage.tsdb.path={workdir / 'data'}", f"--web.listen-address={address}"],
                 f"http://{address}/-/ready", "prometheus"):
        yield Prometheus(f"http://{address}")
