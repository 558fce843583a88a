"""The `depyf` command line, run as a subprocess: unusable files give exit 2
and one line on stderr, never a traceback; good files give source."""

import os
import py_compile
import re
import shutil
import subprocess
import sys

import pytest

PYENV = "/root/.pyenv/versions"

SOURCE = '''\
def greet(name, punctuation="!"):
    if not name:
        return "hello" + punctuation
    return "hello " + name + punctuation
'''


def depyf(*args):
    # The environment decides which depyf runs: the installed one under
    # tools/test.sh (PYTHONSAFEPATH=1), the checkout's in a developer build.
    return subprocess.run([sys.executable, "-m", "depyf", *map(str, args)],
                          capture_output=True, text=True, timeout=120)


def reason_of_input_error(result, path):
    """Checks the error contract (exit 2, one line naming the file) and returns the reason."""
    assert result.returncode == 2, result
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    prefix = f"depyf: {path}: "
    assert lines[0].startswith(prefix), lines[0]
    reason = lines[0][len(prefix):]
    assert reason
    return reason


def skip_while_stub(text):
    if "not built yet" in text:
        pytest.skip(f"core not built yet: {text.strip()}")


@pytest.fixture
def source_file(tmp_path):
    path = tmp_path / "greet.py"
    path.write_text(SOURCE)
    return path


@pytest.fixture
def pyc_file(source_file, tmp_path):
    return py_compile.compile(str(source_file), cfile=str(tmp_path / "greet.pyc"), doraise=True)


@pytest.fixture
def pyc_bytes(pyc_file):
    with open(pyc_file, "rb") as f:
        return f.read()


@pytest.mark.parametrize("command", ["decompile", "disasm"])
def test_missing_file(tmp_path, command):
    path = tmp_path / "missing.pyc"
    assert reason_of_input_error(depyf(command, path), path) == "No such file or directory"


@pytest.mark.parametrize("command", ["decompile", "disasm"])
def test_directory(tmp_path, command):
    assert reason_of_input_error(depyf(command, tmp_path), tmp_path).startswith("a directory")


@pytest.mark.parametrize("command", ["decompile", "disasm"])
@pytest.mark.parametrize("keep", [0, 1, 3, 4, 8, 12, 15, 16, 17, 24, "half", "all but one"])
def test_truncated_pyc(pyc_bytes, tmp_path, command, keep):
    n = {"half": len(pyc_bytes) // 2, "all but one": len(pyc_bytes) - 1}.get(keep, keep)
    path = tmp_path / "truncated.pyc"
    path.write_bytes(pyc_bytes[:n])
    reason_of_input_error(depyf(command, path), path)


def test_wrong_magic(pyc_bytes, tmp_path):
    path = tmp_path / "foreign.pyc"
    path.write_bytes(b"\x42\x42\r\n" + pyc_bytes[4:])
    reason = reason_of_input_error(depyf("decompile", path), path)
    skip_while_stub(reason)
    assert "magic" in reason.lower()


def test_not_a_pyc(tmp_path):
    path = tmp_path / "notes.txt"
    path.write_text("just some text, long enough to hold a header\n" * 3)
    reason_of_input_error(depyf("disasm", path), path)


def test_bad_marshal_data(pyc_bytes, tmp_path):
    path = tmp_path / "garbage.pyc"
    path.write_bytes(pyc_bytes[:16] + b"\xff" * 64)
    reason_of_input_error(depyf("decompile", path), path)


def test_py_file_with_a_syntax_error(tmp_path):
    path = tmp_path / "broken.py"
    path.write_text("x = 1\ndef f(:\n")
    assert reason_of_input_error(depyf("decompile", path), path).startswith("line 2: ")


def test_indent_out_of_range_is_refused(pyc_file):
    result = depyf("decompile", "--indent", "0", pyc_file)
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr == ("depyf decompile: error: argument --indent: must be between 1 and 16, not 0 "
                             "(see depyf decompile --help)\n")


def test_help_documents_errors_and_exit_status():
    result = depyf("--help")
    assert result.returncode == 0
    for words in ("decompile", "disasm", ".pyc", "Exit status", "depyf: FILE: reason"):
        assert words in result.stdout


def test_no_command_is_a_usage_error():
    result = depyf()
    assert result.returncode == 2
    assert result.stderr == "depyf: error: the following arguments are required: COMMAND (see depyf --help)\n"


def run_greet(source):
    namespace = {}
    exec(compile(source, "<decompiled>", "exec"), namespace)
    greet = namespace["greet"]
    return greet("world"), greet(""), greet("x", punctuation="?")


@pytest.mark.parametrize("which", ["pyc", "py"])
def test_decompiled_source_behaves_like_the_original(which, pyc_file, source_file):
    result = depyf("decompile", pyc_file if which == "pyc" else source_file)
    skip_while_stub(result.stderr)
    assert result.returncode == 0, result.stderr
    assert run_greet(result.stdout) == run_greet(SOURCE)


def test_indent_option_changes_indentation(pyc_file):
    result = depyf("decompile", "--indent", "2", pyc_file)
    skip_while_stub(result.stderr)
    assert result.returncode == 0, result.stderr
    assert "\n  return " in result.stdout or "\n  if " in result.stdout
    assert run_greet(result.stdout) == run_greet(SOURCE)


@pytest.mark.parametrize("which", ["pyc", "py"])
def test_disasm_lists_every_code_object(which, pyc_file, source_file):
    result = depyf("disasm", pyc_file if which == "pyc" else source_file)
    skip_while_stub(result.stderr)
    assert result.returncode == 0, result.stderr
    assert "<module>" in result.stdout and "greet" in result.stdout


@pytest.mark.parametrize("version", ["3.8.18", "3.9.18", "3.10.13", "3.11.7", "3.12.1", "3.13.0"])
def test_pyc_of_every_supported_version(version, source_file, tmp_path):
    python = os.path.join(PYENV, version, "bin", "python")
    if not os.path.exists(python):
        pytest.skip(f"Python {version} not installed")
    pyc = tmp_path / f"greet-{version}.pyc"
    subprocess.run([python, "-c", f"import py_compile; py_compile.compile({str(source_file)!r}, "
                                  f"cfile={str(pyc)!r}, doraise=True)"], check=True, timeout=60)
    disasm = depyf("disasm", pyc)
    skip_while_stub(disasm.stderr)
    assert disasm.returncode == 0, disasm.stderr
    assert "greet" in disasm.stdout
    result = depyf("decompile", pyc)
    skip_while_stub(result.stderr)
    assert result.returncode == 0, result.stderr
    assert run_greet(result.stdout) == run_greet(SOURCE)


# Hostile inputs (issue 17): only regular files are read, their size checked first;
# every failure is one line with a documented exit status.

def test_fifo_is_refused_without_blocking(tmp_path):
    fifo = tmp_path / "pipe.pyc"
    os.mkfifo(fifo)
    for command in ("decompile", "disasm"):
        assert reason_of_input_error(depyf(command, fifo), fifo) == "a FIFO"


def test_device_is_refused_without_reading(tmp_path):
    assert reason_of_input_error(depyf("decompile", "/dev/zero"), "/dev/zero") == "a character device"


def test_huge_sparse_file_is_refused_before_reading(tmp_path):
    path = tmp_path / "sparse.pyc"
    with open(path, "wb") as f:
        f.truncate(2 * 1024 ** 3)
    assert reason_of_input_error(depyf("decompile", path), path).startswith("too large: 2147483648 bytes")


def test_stdout_full_is_one_line_and_exit_2(source_file):
    with open("/dev/full", "w") as full:
        result = subprocess.run([sys.executable, "-m", "depyf", "decompile", str(source_file)],
                                stdout=full, stderr=subprocess.PIPE, text=True, timeout=120)
    assert result.returncode == 2
    assert result.stderr == "depyf: <stdout>: cannot write: No space left on device\n"


def test_stdout_closed_is_one_line_and_exit_2(source_file):
    result = subprocess.run(["sh", "-c", '"$0" -m depyf decompile "$1" >&-', sys.executable, str(source_file)],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 2
    assert result.stderr == "depyf: <stdout>: stdout is closed\n"


def test_source_too_deep_for_the_compiler_is_one_line(tmp_path):
    path = tmp_path / "elifs.py"
    path.write_text("x = 0\nif x == 0:\n    pass\n" + "".join("elif x == %d:\n    pass\n" % i for i in range(1, 3000)))
    result = depyf("decompile", path)
    # (asked of a fresh interpreter, as depyf runs in one: torch, imported by other tests,
    # raises this process's recursion limit, and with it how deep the compiler may go)
    probe = "import sys\ntry:\n    compile(open(sys.argv[1]).read(), sys.argv[1], 'exec')\n" \
            "except RecursionError:\n    print('RecursionError')\n"
    too_deep = subprocess.run([sys.executable, "-c", probe, str(path)], capture_output=True, text=True,
                              check=True).stdout.strip() == "RecursionError"
    if too_deep:
        assert reason_of_input_error(result, path).startswith("the running Python cannot compile it (RecursionError")
    else:  # this Python's compiler takes it
        assert result.returncode in (0, 1) and len(result.stderr.splitlines()) <= 1, result


def test_report_never_waits_on_a_fifo_nor_reads_a_device(tmp_path):
    for name, make in (("fifo", os.mkfifo), ("zero", lambda p: os.symlink("/dev/zero", p))):
        dump = tmp_path / name
        dump.mkdir()
        (dump / "__transformed_code_0_for_f.py").write_text("def f():\n    return 1\n")
        make(dump / "depyf_manifest.json")
        os.symlink("/dev/zero", dump / "full_code_for_f_0.py")
        result = depyf("report", dump)  # (the timeout fails the test if it blocks)
        assert result.returncode in (0, 2) and "Traceback" not in result.stderr, result
        if result.returncode == 0:
            page = (dump / "index.html").read_text()
            assert "__transformed_code_0_for_f.py" in page and "full_code_for_f_0.py" not in page


def test_version():
    import depyf as installed
    result = depyf("--version")
    assert result.returncode == 0 and result.stdout == "depyf %s\n" % installed.__version__


def test_help_says_when_1_and_when_2_are_returned():
    text = depyf("decompile", "--help").stdout
    assert re.search(r"^  1  the file was read but its bytecode cannot be decompiled", text, re.M)
    assert re.search(r"^  2  the command cannot run as asked", text, re.M)


def test_python_m_depyf_in_a_source_tree_says_what_to_do(tmp_path):
    import depyf as installed
    checkout = tmp_path / "checkout"
    shutil.copytree(os.path.dirname(installed.__file__), checkout / "depyf",
                    ignore=shutil.ignore_patterns("_core*", "__pycache__"))
    env = {k: v for k, v in os.environ.items() if k != "PYTHONSAFEPATH"}
    result = subprocess.run([sys.executable, "-m", "depyf", "decompile", "x.pyc"], cwd=checkout, env=env,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 1 and result.stdout == ""
    [line] = result.stderr.splitlines()
    assert line.startswith("depyf: the C extension depyf._core is not built in ")
    assert "tools/dev_build.sh" in line and "pip install" in line
