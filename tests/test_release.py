"""A release (docs/releasing.md): the version written once, in VERSION, and
read or checked everywhere it appears; the licence the files claim; and the
tarball `make dist` builds, which builds, installs and writes a report with
noise-report from the prefix, outside any checkout."""
import hashlib
import json
import os
import re
import struct
import subprocess
import sys
import tarfile
import zlib

import pytest
import yaml
from nbtest import KERNELS, ROOT, kernels_where, quick_args

VERSION = (ROOT / "VERSION").read_text().strip()
RECIPE = ROOT / "spack-repo" / "packages" / "noisebench" / "package.py"


def test_the_version_is_a_semantic_version():
    assert re.fullmatch(r"\d+\.\d+\.\d+", VERSION), VERSION


def test_every_file_that_spells_out_the_version_has_versions_one():
    """The formats that cannot read VERSION: scripts/set-version writes them."""
    spelled = {
        "analysis/DESCRIPTION": re.search(r"^Version: (\S+)$",
                                          (ROOT / "analysis/DESCRIPTION").read_text(), re.M),
        "reframe/pyproject.toml": re.search(r'^version = "([^"]+)"$',
                                            (ROOT / "reframe/pyproject.toml").read_text(), re.M),
        "the recipe's release": re.search(r'^    version\("([\d.]+)", tag="v\1"\)$',
                                          RECIPE.read_text(), re.M),
        "CHANGELOG.md's newest release": re.search(r"^## \[(\d[^\]]*)\]",
                                                   (ROOT / "CHANGELOG.md").read_text(), re.M),
    }
    got = {where: m.group(1) if m else None for where, m in spelled.items()}
    got["CITATION.cff"] = str(yaml.safe_load((ROOT / "CITATION.cff").read_text())["version"])
    assert got == dict.fromkeys(got, VERSION)


# the script's own reader of a PNG's chunks
sys.path.insert(0, str(ROOT / "scripts"))
import readme_picture  # noqa: E402


def png_texts(data):
    """A PNG's tEXt chunks, key to value."""
    return dict(c[8:-4].decode().split("\0", 1) for c in readme_picture.chunks(data)
                if c[4:8] == b"tEXt")


def test_the_readme_picture_shows_this_version():
    """scripts/readme_picture.py keeps the version the page named in the
    PNG; a release that did not make the picture anew fails here."""
    picture = (ROOT / "docs/img/report-first-screen.png").read_bytes()
    shown = png_texts(picture).get("noisebench-version")
    assert shown == VERSION, \
        f"docs/img/report-first-screen.png shows {shown}: scripts/readme_picture.py RESULTS_DIR"


def test_the_picture_keeps_the_version_it_is_given(tmp_path):
    png = (ROOT / "docs/img/report-first-screen.png").read_bytes()
    marked = readme_picture.with_text(png, b"noisebench-version", "9.8.7")
    assert png_texts(marked)["noisebench-version"] == "9.8.7"
    assert marked.count(b"noisebench-version") == 1
    # the chunk is whole: every chunk's CRC holds
    for chunk in readme_picture.chunks(marked):
        assert struct.unpack(">I", chunk[-4:])[0] == zlib.crc32(chunk[4:-4])
    page = tmp_path / "index.html"
    page.write_text("<p>noisebench 1.2.3 (commit abc1234); measured ...</p>")
    assert readme_picture.version_on(page) == "1.2.3"


@pytest.mark.release
def test_sequoias_make_single_and_make_threads_build_its_binaries(tmp_path):
    """The original's build targets, as its users type them (docs/kernels.md)."""
    # a make of its own, not a child of the make that runs the tests
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL")}
    # Sequoia's tools are the kernels it also built with OpenMP
    sequoia = kernels_where(openmp=True)
    for target, names in (("single", sequoia), ("threads", [f"t_{k}" for k in sequoia])):
        done = subprocess.run(["make", "-s", target, f"BUILD={tmp_path}"], cwd=ROOT, env=env,
                              capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stderr[-2000:]
        for name in names:
            usage = subprocess.run([tmp_path / "bin" / name, "-h"], capture_output=True,
                                   text=True, timeout=60)
            assert usage.returncode == 0 and "-w" in usage.stdout + usage.stderr, name


@pytest.mark.parametrize("kernel", list(KERNELS)[:1])
def test_the_kernels_json_and_the_r_package_read_it(run, tmp_path, bin_dir, kernel):
    done = run(kernel, "-t", 1, *quick_args(kernel), "-o", "v")
    assert done.returncode == 0, done.stderr
    assert json.loads((tmp_path / "v.json").read_text())["noisebench_version"] == VERSION
    lib = bin_dir.parent / "lib" / "R"
    if not (lib / "noisebench").exists():
        pytest.skip("this build has no R package")
    r = subprocess.run(["Rscript", "-e", f".libPaths('{lib}'); "
                        "cat(format(utils::packageVersion('noisebench')))"],
                       capture_output=True, text=True, timeout=120)
    assert r.stdout == VERSION, r.stderr


def test_the_licence_is_the_one_the_files_claim():
    text = (ROOT / "LICENSE").read_text()
    spdx = re.search(r"SPDX-License-Identifier: (.+)$", text, re.M).group(1).strip()
    assert spdx == "Apache-2.0 OR MIT"
    assert "Apache License" in (ROOT / "LICENSE-APACHE").read_text()
    assert "MIT License" in (ROOT / "LICENSE-MIT").read_text()
    assert f'license("{spdx}"' in RECIPE.read_text()
    assert f"SPDX-License-Identifier: ({spdx})" in RECIPE.read_text()
    assert re.search(r"^License: MIT \+ file LICENSE \| Apache License \(== 2\.0\)$",
                     (ROOT / "analysis/DESCRIPTION").read_text(), re.M)
    assert yaml.safe_load((ROOT / "CITATION.cff").read_text())["license"] == spdx


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """make dist in a clone of this commit, the tarball built and installed
    into a prefix: (tarball, its sha256 file, the commit, the prefix)."""
    if os.environ.get("NB_SANITIZE"):
        pytest.skip("the tarball builds its own release")
    top = tmp_path_factory.mktemp("release")
    subprocess.run(["git", "clone", "-q", str(ROOT), str(top / "clone")], check=True)
    commit = subprocess.run(["git", "-C", str(top / "clone"), "rev-parse", "HEAD"],
                            capture_output=True, text=True, check=True).stdout.strip()
    done = subprocess.run(["make", "-s", "dist"], cwd=top / "clone", capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    tarball = top / "clone" / "dist" / f"noisebench-{VERSION}.tar.gz"
    subprocess.run(["tar", "-xzf", str(tarball), "-C", str(top)], check=True)
    source, build, prefix = top / f"noisebench-{VERSION}", top / "build", top / "prefix"
    for cmd in (["cmake", "-S", source, "-B", build, "-DNOISEBENCH_MPI=OFF"],
                ["cmake", "--build", build, "-j", str(len(os.sched_getaffinity(0)))],
                ["cmake", "--install", build, "--prefix", prefix]):
        done = subprocess.run([str(c) for c in cmd], capture_output=True, text=True,
                              timeout=900)
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return tarball, tarball.with_name(tarball.name + ".sha256"), commit, prefix


def test_dist_is_the_commit_as_a_versioned_tarball_with_its_sha256(installed):
    tarball, sha_file, commit, _ = installed
    digest, name = sha_file.read_text().split()
    assert name == tarball.name
    assert digest == hashlib.sha256(tarball.read_bytes()).hexdigest()
    with tarfile.open(tarball) as tar:
        names = tar.getnames()
        assert all(n.split("/")[0] == f"noisebench-{VERSION}" for n in names)
        for top_file in ("VERSION", "LICENSE", "CHANGELOG.md", "CITATION.cff", "CMakeLists.txt"):
            assert f"noisebench-{VERSION}/{top_file}" in names
        # git archive named the commit, which a build outside git records
        archived = tar.extractfile(f"noisebench-{VERSION}/src/COMMIT").read().decode().strip()
        assert archived == commit


def test_the_installed_noise_report_writes_a_report_outside_the_checkout(installed, tmp_path):
    _, _, commit, prefix = installed
    kernel = next(iter(KERNELS))
    results = tmp_path / "results"
    results.mkdir()
    done = subprocess.run([str(prefix / "bin" / kernel), "-t", "1", *quick_args(kernel), "-o",
                           "run"], cwd=results, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    meta = json.loads((results / "run.json").read_text())
    assert (meta["noisebench_version"], meta["tuning"]["noisebench_commit"]) == \
        (VERSION, commit[:12])
    # from a directory that is no checkout, with no R library set
    env = {k: v for k, v in os.environ.items() if not k.startswith("R_")}
    done = subprocess.run([str(prefix / "bin" / "noise-report"), str(results), "--no-pdf"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    page = (results / "report" / "index.html").read_text()
    assert f"noisebench {VERSION} (commit {commit[:12]})" in page
    assert (results / "report" / "summary.csv").exists()
    # its other commands, and a usage that names it
    done = subprocess.run([str(prefix / "bin" / "noise-report"), "predict",
                           str(results / "run.json"), "--phase-us", "100", "--processes", "10"],
                          capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("mode,phase_us,processes,slowdown"), done.stdout
    done = subprocess.run([str(prefix / "bin" / "noise-report")], capture_output=True, text=True,
                          timeout=60, env=env)
    assert done.returncode == 2 and done.stderr.startswith("usage: noise-report "), done.stderr
