"""`depyf decompile PATH... -o OUTDIR` on a tree of good, damaged and foreign files: every
good file's source lands in the mirrored tree and compiles under the Python that wrote the
.pyc; every bad file is one line on stderr and the batch goes on; exit 1."""

import glob
import os
import re
import shutil
import signal
import subprocess
import sys

import pytest

from depyf import _batch
from test_cli import SOURCE as GOOD_SOURCE, depyf

PYC_FIXTURES = os.path.join(os.path.dirname(__file__), "data", "pyc")


def python_of(minor):
    """This machine's interpreter for 3.<minor>, or None."""
    found = sorted(glob.glob("/root/.pyenv/versions/3.%d.*/bin/python" % minor))
    return found[0] if found else None


def make_tree(root):
    """(tree, good, bad): the input tree, its good files and its bad files (paths)."""
    tree = root / "tree"
    cache = tree / "pkg" / "__pycache__"
    cache.mkdir(parents=True)
    good, bad = [], []
    for pyc in sorted(glob.glob(os.path.join(PYC_FIXTURES, "*.pyc"))):
        shutil.copy(pyc, cache)
        good.append(cache / os.path.basename(pyc))
    (tree / "pkg" / "greet.py").write_text(GOOD_SOURCE)
    # (the compiler's warning about this line must not reach stderr)
    (tree / "pkg" / "warns.py").write_text("def f(x):\n    return x is 1\n")
    good.append(tree / "pkg" / "warns.py")
    (tree / "pkg" / "deeper" / "and_deeper").mkdir(parents=True)
    (tree / "pkg" / "deeper" / "and_deeper" / "leaf.py").write_text("X = [i * i for i in range(3)]\n")
    good += [tree / "pkg" / "greet.py", tree / "pkg" / "deeper" / "and_deeper" / "leaf.py"]
    (tree / "notes.txt").write_text("not an input: ignored\n")

    sample = (cache / "behaviour_cases_match.cpython-311.pyc").read_bytes()
    damaged = tree / "damaged"
    damaged.mkdir()
    bad_files = {
        "truncated.cpython-311.pyc": sample[: len(sample) // 2],
        "garbage_marshal.cpython-311.pyc": sample[:16] + b"\xff" * 64,
        "empty.pyc": b"",
        "text.pyc": b"hello, this is not a .pyc file at all\n" * 4,
        "python37.cpython-37.pyc": b"\x42\x0d\r\n" + sample[4:],  # 3.7's magic number
        "syntax_error.py": b"def f(:\n",
        "nul_bytes.py": b"x = 1\x00\n",
    }
    for name, data in bad_files.items():
        (damaged / name).write_bytes(data)
        bad.append(damaged / name)
    os.mkfifo(damaged / "fifo.pyc")  # must be refused, never waited on
    bad.append(damaged / "fifo.pyc")
    return tree, good, bad


def summary_numbers(stdout):
    files, decompiled, failed = map(int, re.search(
        r"^(\d+) files in [\d.]+ s on \d+ processes: (\d+) decompiled, (\d+) failed$", stdout, re.M).groups())
    functions, structured, machines = map(int, re.search(
        r"^(\d+) functions \(module, class and def bodies\): (\d+) structured, (\d+) as state machines$",
        stdout, re.M).groups())
    return files, decompiled, failed, functions, structured, machines


def test_tree_of_good_damaged_and_foreign_files(tmp_path):
    tree, good, bad = make_tree(tmp_path)
    out = tmp_path / "out"
    result = depyf("decompile", tree, "-o", out)
    assert result.returncode == 1, result

    # Each bad file: one line on stderr naming it; no output file for it.
    lines = result.stderr.splitlines()
    assert "Traceback" not in result.stderr
    assert sorted(line.split(": ")[1] for line in lines) == sorted(map(str, bad)), lines
    assert any("magic number 3394" in line for line in lines)
    for path in bad:
        assert not (out / _batch.output_name(str(path.relative_to(tree)))).exists()

    files, decompiled, failed, functions, structured, machines = summary_numbers(result.stdout)
    assert (files, decompiled, failed) == (len(good) + len(bad), len(good), len(bad))
    assert functions > 200 * 6 and structured + machines == functions

    # The mirrored tree: one .py per good input, at the same relative path.
    written = sorted(str(p.relative_to(out)) for p in out.rglob("*") if p.is_file())
    assert written == sorted(_batch.output_name(str(p.relative_to(tree))) for p in good)

    # Every output compiles under the Python that wrote its input, where present.
    checked = set()
    for path in good:
        target = out / _batch.output_name(str(path.relative_to(tree)))
        version = re.search(r"cpython-3(\d+)", path.name)
        python = python_of(int(version.group(1))) if version else sys.executable
        if python is None:
            continue
        subprocess.run([python, "-c", "import sys; compile(open(sys.argv[1], encoding='utf-8').read(), "
                                      "sys.argv[1], 'exec')", str(target)], check=True, timeout=120)
        checked.add(version.group(1) if version else "py")
    assert "11" in checked and "py" in checked

    # The decompiled .py behaves like the original.
    namespace = {}
    exec((out / "pkg" / "greet.py").read_text(), namespace)
    assert namespace["greet"]("world") == "hello world!" and namespace["greet"]("", "?") == "hello?"


def test_files_named_go_into_outdir_and_the_summary_is_all_of_stdout(tmp_path):
    a, b = tmp_path / "a.py", tmp_path / "sub" / "b.cpython-311.pyc"
    a.write_text(GOOD_SOURCE)
    b.parent.mkdir()
    shutil.copy(os.path.join(PYC_FIXTURES, "behaviour_cases_match.cpython-311.pyc"), b)
    out = tmp_path / "out"
    result = depyf("decompile", a, b, "-o", out, "--jobs", "1")
    assert result.returncode == 0 and result.stderr == "", result
    assert sorted(p.name for p in out.iterdir()) == ["a.py", "b.cpython-311.py"]
    assert summary_numbers(result.stdout)[:3] == (2, 2, 0)
    assert len(result.stdout.splitlines()) == 3  # piped: no progress bar, only the summary


def test_a_file_whose_output_another_took_fails_alone(tmp_path):
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "m.py").write_text("x = 1\n")
    shutil.copy(os.path.join(PYC_FIXTURES, "behaviour_cases_match.cpython-311.pyc"), tmp_path / "in" / "m.pyc")
    result = depyf("decompile", tmp_path / "in", "-o", tmp_path / "out")
    assert result.returncode == 1
    assert summary_numbers(result.stdout)[:3] == (2, 1, 1)
    [line] = result.stderr.splitlines()
    assert "is already written from" in line


def test_outdir_inside_the_tree_is_not_read_back(tmp_path):
    (tmp_path / "m.py").write_text("x = 1\n")
    for _ in range(2):
        result = depyf("decompile", tmp_path, "-o", tmp_path / "out")
        assert result.returncode == 0, result
        assert summary_numbers(result.stdout)[:3] == (1, 1, 0)


def test_outdir_that_cannot_be_made_is_exit_2(tmp_path):
    (tmp_path / "m.py").write_text("x = 1\n")
    (tmp_path / "file").write_text("")
    result = depyf("decompile", tmp_path / "m.py", "-o", tmp_path / "file" / "out")
    assert result.returncode == 2 and result.stdout == ""
    [line] = result.stderr.splitlines()
    assert line.startswith("depyf: %s: " % (tmp_path / "file" / "out"))


def test_several_files_without_outdir_is_a_usage_error(tmp_path):
    (tmp_path / "m.py").write_text("x = 1\n")
    result = depyf("decompile", tmp_path / "m.py", tmp_path / "m.py")
    assert result.returncode == 2 and len(result.stderr.splitlines()) == 1 and "give -o OUTDIR" in result.stderr


def test_a_worker_that_dies_or_hangs_fails_its_file_and_the_batch_goes_on(tmp_path, monkeypatch):
    if _batch._context().get_start_method() != "fork":
        pytest.skip("the patched worker needs fork")
    names = ["dies.py", "hangs.py"] + ["ok%d.py" % i for i in range(6)]
    for name in names:
        (tmp_path / name).write_text("x = 1\n")
    real = _batch.decompile_one

    def decompile_one(task, indent):
        if task.source.endswith("dies.py"):
            os.kill(os.getpid(), signal.SIGKILL)
        if task.source.endswith("hangs.py"):
            signal.pause()  # until the batch's --timeout kills it
        return real(task, indent)

    monkeypatch.setattr(_batch, "decompile_one", decompile_one)
    tasks, failures = _batch.collect([tmp_path], str(tmp_path / "out"))
    results = []
    _batch.run(tasks, jobs=2, indent=4, on_result=results.append, timeout=5)
    errors = {os.path.basename(r.source): r.error for r in results}
    assert sorted(errors) == sorted(names) and not failures
    assert errors.pop("dies.py") == "the decompiling process was killed by SIGKILL"
    assert errors.pop("hangs.py") == "took longer than 5 s (--timeout)"
    assert set(errors.values()) == {None}
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == sorted("ok%d.py" % i for i in range(6))


def test_jobs_and_timeout_need_outdir(tmp_path):
    (tmp_path / "m.py").write_text("x = 1\n")
    result = depyf("decompile", tmp_path / "m.py", "--jobs", "2")
    assert result.returncode == 2
    assert result.stderr == "depyf decompile: error: --jobs and --timeout go with -o OUTDIR (see depyf decompile --help)\n"
