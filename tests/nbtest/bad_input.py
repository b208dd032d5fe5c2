"""Bad input to a kernel: one clear line, a non-zero exit, and no files
left behind (the driver's options in test_cli.py, a kernel's own in its
test file)."""
import pytest


def check_bad_input(run, directory, kernel, args, mentions):
    """The kernel, told args, exits 2 with one line `<kernel>: error: ...`
    that mentions `mentions`, and writes nothing into directory."""
    res = run(kernel, "--warmup-ms", "0", *args)
    assert res.returncode == 2, res.stderr
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1, res.stderr
    assert lines[0].startswith(f"{kernel}: error: ")
    assert mentions in lines[0]
    assert list(directory.iterdir()) == [], "a failed run left files behind"


def bad_input_test(kernel, cases):
    """A test of the kernel's bad options: cases are (args, what the line
    mentions), each a case of the test."""
    @pytest.mark.parametrize("args,mentions", cases, ids=[" ".join(c[0]) for c in cases])
    def test(run, tmp_path, args, mentions):
        check_bad_input(run, tmp_path, kernel, args, mentions)
    return test
