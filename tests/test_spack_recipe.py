"""What CI can check of the Spack recipe without Spack: it compiles, ruff
passes at 99 columns, and every CMake option it passes exists."""
import py_compile
import re
import subprocess
import sys

from nbtest import CATALOGUE, ROOT

RECIPE = ROOT / "spack-repo" / "packages" / "noisebench" / "package.py"


def test_recipe_compiles(tmp_path):
    py_compile.compile(str(RECIPE), cfile=str(tmp_path / "package.pyc"), doraise=True)


def test_recipe_passes_ruff():
    result = subprocess.run([sys.executable, "-m", "ruff", "check", "--line-length", "99",
                             "--ignore", "F403,F405",  # spack.package's star import
                             str(ROOT / "spack-repo")], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def cmake_options():
    text = "\n".join(p.read_text() for p in ROOT.glob("**/CMakeLists.txt")
                     if ".venv" not in p.parts and not p.parts[len(ROOT.parts)].startswith("build"))
    return set(re.findall(r"option\((\w+)", text)) | set(
        re.findall(r"set\((\w+)\s[^)]*CACHE", text))


def test_every_cmake_option_the_recipe_passes_exists():
    passed = set(re.findall(r'define(?:_from_variant)?\(\s*"(\w+)"', RECIPE.read_text()))
    assert passed, "the recipe passes no CMake option"
    assert passed <= cmake_options(), passed - cmake_options()


def test_work_variant_values_are_the_projects_work_kinds():
    """The portable kinds of the catalogue are the work variant's values,
    and each kind for some processors only (asm) a variant of its own."""
    recipe = RECIPE.read_text()
    values = re.search(r'any_combination_of\(([^)]*)\)', recipe).group(1)
    kinds = CATALOGUE["work_kinds"]
    assert set(re.findall(r'"(\w+)"', values)) == {k for k, v in kinds.items() if "arch" not in v}
    assert re.search(r'with_default\(\s*"multiiter,increment,daxpy"', recipe)
    for kind in (k for k, v in kinds.items() if "arch" in v):
        assert kinds[kind]["arch"] == ["x86_64"]
        assert re.search(rf'variant\(\s*"{kind}", default=True, when="target=x86_64:"', recipe)
