"""The .pyc reader and disassembler against every installed CPython 3.8-3.13:
stdlib modules compiled by that interpreter must all be read, and the
listing must name the same instructions as that interpreter's `dis`, with
the same line starts and jump targets."""
import glob
import json
import re
import subprocess

import pytest

core = pytest.importorskip("depyf._core")
if not hasattr(core, "disasm_pyc"):
    pytest.skip("depyf._core.disasm_pyc is not built yet", allow_module_level=True)

# Classes, closures, comprehensions, async, try/with and long functions:
# enough variety at about a second per interpreter.
MODULES = [
    "argparse", "dataclasses", "typing", "asyncio.tasks", "json.decoder", "functools",
    "contextlib", "email.message", "collections",
]


def interpreters():
    found = {}
    for py in sorted(glob.glob("/root/.pyenv/versions/3.*/bin/python")):
        minor = int(py.split("/")[-3].split(".")[1])
        if 8 <= minor <= 13:
            found[minor] = py
    return [found[m] for m in sorted(found)]


# Runs in the interpreter under test: compiles the modules into .pyc files
# and reports, per code object in dis's order, what dis and co_lines say.
DIS_DUMP = r'''
import dis, json, marshal, os, py_compile, sys, sysconfig
mods, outdir = json.loads(sys.argv[1]), sys.argv[2]
jumps = set(dis.hasjrel) | set(dis.hasjabs)

def walk(co):
    yield co
    for c in co.co_consts:
        if hasattr(c, "co_code"):
            yield from walk(c)

def line_starts(co):
    if not hasattr(co, "co_lines"):
        return dict(dis.findlinestarts(co))
    starts, last = {}, None
    for start, _end, line in co.co_lines():
        if line is not None and line != last:
            starts[start] = last = line
    return starts

report = {}
for name in mods:
    base = os.path.join(sysconfig.get_paths()["stdlib"], *name.split("."))
    src = base + ".py" if os.path.exists(base + ".py") else os.path.join(base, "__init__.py")
    pyc = py_compile.compile(src, cfile=os.path.join(outdir, name + ".pyc"), doraise=True)
    with open(pyc, "rb") as fh:
        top = marshal.loads(fh.read()[16:])
    codes = []
    for co in walk(top):
        ins = list(dis.get_instructions(co))
        codes.append({
            "name": co.co_name,
            "ops": [i.opname for i in ins],
            "offsets": [str(i.offset) for i in ins],
            "lines": {str(k): v for k, v in line_starts(co).items()},
            "jumps": {str(i.offset): i.argval for i in ins if i.opcode in jumps},
        })
    report[name] = {"pyc": pyc, "codes": codes}
json.dump(report, sys.stdout)
'''

HEADER = re.compile(r"^Disassembly of code object .* \(name (.*)\), file ")
INSTRUCTION = re.compile(r"^(.{5})(?: >>|   ) +(\d+) (\S+)(?: +\d+)?(?: \((.*)\))?$")


def parse_listing(text):
    """Per code object: name, opnames, line starts and jump targets."""
    codes = []
    for line in text.splitlines():
        m = HEADER.match(line)
        if m:
            codes.append({"name": m.group(1), "ops": [], "lines": {}, "jumps": {}})
            continue
        m = INSTRUCTION.match(line)
        if not m or not codes:
            continue
        lineno, offset, opname, argrepr = m.groups()
        cur = codes[-1]
        cur["ops"].append(opname)
        if lineno.strip():
            cur["lines"][offset] = int(lineno)
        if argrepr and argrepr.startswith("to ") and argrepr[3:].isdigit():
            cur["jumps"][offset] = int(argrepr[3:])
    return codes


@pytest.fixture(scope="module", params=interpreters(), ids=lambda py: py.split("/")[-3])
def compiled(request, tmp_path_factory):
    """(module, what dis says per code object, what the listing says)."""
    outdir = tmp_path_factory.mktemp("pyc")
    res = subprocess.run([request.param, "-c", DIS_DUMP, json.dumps(MODULES), str(outdir)],
                         capture_output=True, text=True, check=True)
    result = []
    for name, entry in json.loads(res.stdout).items():
        with open(entry["pyc"], "rb") as fh:
            result.append((name, entry["codes"], parse_listing(core.disasm_pyc(fh.read()))))
    return result


def test_every_module_is_read_with_the_instructions_dis_lists(compiled):
    for name, want_codes, got_codes in compiled:
        assert [c["name"] for c in got_codes] == [c["name"] for c in want_codes], name
        for got, want in zip(got_codes, want_codes):
            assert got["ops"] == want["ops"], (name, want["name"])


def test_line_starts_and_jump_targets_agree_with_dis(compiled):
    for name, want_codes, got_codes in compiled:
        for got, want in zip(got_codes, want_codes):
            # 3.8's lnotab can also name the offset just past the code
            at_instructions = {k: v for k, v in want["lines"].items() if k in want["offsets"]}
            assert got["lines"] == at_instructions, (name, want["name"])
            assert got["jumps"] == want["jumps"], (name, want["name"])


def test_bad_magic_names_the_number_and_the_versions():
    with pytest.raises(ValueError, match=r"3394.*3\.8.*3\.13"):
        core.disasm_pyc(b"\x42\x0d\r\n" + bytes(12) + b"N")


def test_truncated_file_is_an_error():
    with pytest.raises(ValueError, match="truncated"):
        core.disasm_pyc(b"\xa7\x0d\r\n" + bytes(12) + b"\xe3\x00")
