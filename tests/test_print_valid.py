"""The printer's output is valid Python with the intended meaning, checked by
real interpreters: tests/c/print_snippets.c prints constants, f-strings and
programs through the C printer; every installed CPython 3.8-3.13 compiles
them, and constants must fold to the exact value (bits of floats and signed
zeros included) without any runtime operation."""
import glob
import inspect
import json
import os
import subprocess
import sys
import sysconfig

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def interpreters():
    found = {"%d.%d" % sys.version_info[:2]: sys.executable}
    for path in sorted(glob.glob("/root/.pyenv/versions/3.*/bin/python")):
        minor = int(path.split("/")[-3].split(".")[1])
        if 8 <= minor <= 13:
            found.setdefault("3.%d" % minor, path)
    return sorted(found.items())


@pytest.fixture(scope="module")
def records(tmp_path_factory):
    cc = os.environ.get("CC") or sysconfig.get_config_var("CC") or "cc"
    exe = str(tmp_path_factory.mktemp("snippets") / "print_snippets")
    # only the printer and what it stands on: other parts may be mid-change
    sources = ["src/core/%s.c" % name for name in ("print", "ast", "arena", "buf", "code", "error")]
    env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}
    build = subprocess.run(cc.split()[:1] + ["-std=c11", "-O1", "-Isrc/core", "-o", exe,
                                             "tests/c/print_snippets.c"] + sources + ["-lm"],
                           cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           universal_newlines=True)
    assert build.returncode == 0, build.stdout[-5000:]
    out = subprocess.run([exe], env=env, stdout=subprocess.PIPE, check=True).stdout.decode("utf-8", "surrogatepass")
    result = []
    for chunk in out.split("@@ ")[1:]:
        head, _, source = chunk.partition("\n")
        kind, minor, arg = head.split(" ", 2)
        result.append([kind, int(minor), arg, source])
    return result


def check_records(records):
    """Runs inside the interpreter under test (syntax valid on 3.8)."""
    import ast
    import dis
    import struct

    folded_ops = {"LOAD_CONST", "STORE_NAME", "RETURN_VALUE", "RETURN_CONST", "RESUME", "NOP", "CACHE"}
    ns = {"a": 1, "d": {"k": "v", "it's": "w"}}

    def bits(v):
        return struct.pack(">d", v).hex()

    def extra_check(name, tree):
        if name == "with_one_tuple_item":
            return len(tree.body[0].items) == 1 and isinstance(tree.body[0].items[0].context_expr, ast.Tuple)
        if name == "annotation_not_simple":
            return tree.body[0].simple == 0
        return True

    failures = []
    for kind, minor, arg, source in records:
        if sys.version_info[1] < minor:
            continue
        try:
            if kind == "E":
                value = eval(compile(source, "<snippet>", "eval"), dict(ns))
                ok = repr(value) == arg
            else:
                code = compile(source, "<snippet>", "exec")
                if kind == "P":
                    ok = extra_check(arg, ast.parse(source))
                else:
                    env = {}
                    exec(code, env)
                    x = env["x"]
                    if kind == "F":
                        ok = type(x) is float and bits(x) == arg
                    elif kind == "C":
                        ok = type(x) is complex and "%s:%s" % (bits(x.real), bits(x.imag)) == arg
                    elif kind == "S":
                        ok = type(x) is str and (x.encode("utf-8", "surrogatepass").hex() or "-") == arg
                    else:
                        ok = type(x) is bytes and (x.hex() or "-") == arg
                    # constant-folded: the module only loads and stores a constant
                    if "complex(" not in source:
                        ops = {i.opname for i in dis.get_instructions(code)}
                        ok = ok and ops <= folded_ops
        except Exception as exc:  # a SyntaxError is the failure we look for
            ok = False
            arg = "%s [%s: %s]" % (arg, type(exc).__name__, exc)
        if not ok:
            failures.append("%s %s\n%s" % (kind, arg, source))
    return failures


@pytest.mark.parametrize("version,python", interpreters())
def test_printed_snippets_compile_to_the_intended_values(records, version, python):
    script = inspect.getsource(check_records) + (
        "\nimport json, sys\n"
        "records = json.loads(sys.stdin.buffer.read().decode('utf-8', 'surrogatepass'))\n"
        "sys.stdout.write(json.dumps(check_records(records)))\n")
    data = json.dumps(records).encode("utf-8", "surrogatepass")
    env = {k: v for k, v in os.environ.items() if k not in ("LD_PRELOAD", "PYTHONPATH")}
    run = subprocess.run([python, "-c", script], input=data, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    assert run.returncode == 0, run.stderr.decode(errors="replace")[-3000:]
    failures = json.loads(run.stdout.decode())
    assert not failures, "%d of %d snippets wrong under %s:\n%s" % (
        len(failures), len(records), version, "\n".join(failures[:10]))
