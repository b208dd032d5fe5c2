"""The R package is an ordinary one: its NAMESPACE and help pages are what
roxygen2 makes of the comments beside the code, and it installs from its
own directory (R CMD INSTALL analysis)."""
import shutil
import subprocess

from nbtest import KERNELS, ROOT

ANALYSIS = ROOT / "analysis"


def test_namespace_and_help_pages_are_roxygen2s(tmp_path):
    copy = tmp_path / "analysis"
    shutil.copytree(ANALYSIS, copy, symlinks=False)
    done = subprocess.run(["Rscript", "-e", "roxygen2::roxygenise('.')"], cwd=copy,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    for made in [copy / "NAMESPACE", *sorted((copy / "man").glob("*.Rd"))]:
        kept = ANALYSIS / made.relative_to(copy)
        assert kept.exists(), f"{kept.relative_to(ROOT)}: roxygen2 writes it; commit it"
        assert made.read_text() == kept.read_text(), \
            f"{kept.relative_to(ROOT)} is not what roxygen2 makes of the comments: run " \
            f"Rscript -e \"roxygen2::roxygenise('analysis')\""
    stale = {p.name for p in (ANALYSIS / "man").glob("*.Rd")} - \
        {p.name for p in (copy / "man").glob("*.Rd")}
    assert not stale, f"help pages of nothing roxygen2 documents: {sorted(stale)}"


def test_it_installs_from_its_own_directory(tmp_path):
    lib = tmp_path / "lib"
    lib.mkdir()
    done = subprocess.run(["R", "CMD", "INSTALL", "--no-multiarch", f"--library={lib}",
                           str(ANALYSIS)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    # the catalogue came with it, and the command lines
    assert (lib / "noisebench" / "kernels.json").read_text() == \
        (ROOT / "src" / "kernels" / "kernels.json").read_text()
    loaded = subprocess.run(["Rscript", "-e", f".libPaths('{lib}'); library(noisebench); "
                             "cat(names(noisebench:::noisebench_kernels$kernels))"],
                            capture_output=True, text=True, timeout=120)
    assert loaded.returncode == 0, loaded.stderr
    assert loaded.stdout.split() == list(KERNELS)
