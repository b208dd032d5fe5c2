"""`make` alone installs nothing: it checks for its tools and names in one
line what is missing (a site may build on RHEL or SLES)."""
import shutil
import subprocess

from nbtest import ROOT


def test_the_build_check_names_what_is_missing(tmp_path):
    tools = tmp_path / "bin"
    tools.mkdir()
    # a machine with a compiler and make but no CMake
    for tool in ("bash", "cc", "make", "head", "grep", "sort", "sed"):
        found = shutil.which(tool)
        if found:
            (tools / tool).symlink_to(found)
    done = subprocess.run([ROOT / "scripts" / "check_tools.sh"], env={"PATH": str(tools)},
                          capture_output=True, text=True)
    assert done.returncode == 2
    assert done.stderr.startswith("make: missing: CMake 3.19 or later;"), done.stderr
    assert done.stderr.count("\n") == 1


def test_the_build_check_passes_here():
    done = subprocess.run([ROOT / "scripts" / "check_tools.sh"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
