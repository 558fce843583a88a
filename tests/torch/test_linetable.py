"""The line-table rewrite behind the debug bridge, on every installed CPython 3.8-3.13.

`retarget` must keep the instructions byte for byte and make each instruction
report exactly the line the map gives it, in each version's own format; the
checks run inside each interpreter (the module is pure Python).
"""
import glob
import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.torch

DEPYF_DIR = os.path.join(os.path.dirname(__file__), "..", "..", "depyf")

CHECK = r'''
import dis, random, sys
sys.path.insert(0, sys.argv[1])
import _linetable

# A long function: offsets past 255 and 8-unit chunks; lines jumping both ways far.
src = "def f(a, b):\n" + "".join("    x%d = a + b * %d\n" % (i, i) for i in range(150)) + "    return x0 + x149\n"
ns = {}
exec(compile(src, "orig.py", "exec"), ns)
code = ns["f"].__code__
offsets = [ins.offset for ins in dis.get_instructions(code)]
rnd = random.Random(7)
for trial in range(40):
    chosen = sorted(rnd.sample(offsets, rnd.randint(1, len(offsets))))
    linemap = [(o, rnd.choice([1, 2, 130, 400, rnd.randint(1, 3000)])) for o in chosen]
    first = rnd.randint(1, 40)
    new = _linetable.retarget(code, "/dump/new.py", first, linemap)
    assert new.co_code == code.co_code and new.co_filename == "/dump/new.py"
    assert new.co_firstlineno == first
    expected, line, given = {}, first, dict(linemap)
    for o in range(0, len(code.co_code), 2):
        line = given.get(o, line)
        expected[o] = line
    if sys.version_info >= (3, 10):
        got = {}
        for start, end, line in new.co_lines():
            for o in range(start, end, 2):
                got[o] = line
    else:
        starts, got, line = dict(dis.findlinestarts(new)), {}, None
        for o in range(0, len(code.co_code), 2):
            line = starts.get(o, line)
            got[o] = line
    for o in offsets:
        assert got[o] == expected[o], (trial, o, got[o], expected[o])
    if sys.version_info >= (3, 11):
        for i, pos in enumerate(new.co_positions()):
            assert pos[0] == expected[2 * i], (trial, i, pos)
    fn = type(ns["f"])(new, {})
    assert fn(2, 3) == ns["f"](2, 3)
print("ok", sys.version_info[:2])
'''


def interpreters():
    """This interpreter and every pyenv CPython from 3.8 on (the versions depyf supports)."""
    found = {sys.executable}
    for path in glob.glob("/root/.pyenv/versions/3.*/bin/python"):
        minor = int(path.split("/versions/3.")[1].split(".")[0])
        if minor >= 8 and os.access(path, os.X_OK):
            found.add(path)
    return sorted(found)


@pytest.mark.parametrize("python", interpreters())
def test_retarget_reports_the_mapped_line_for_every_instruction(python):
    proc = subprocess.run([python, "-c", CHECK, os.path.abspath(DEPYF_DIR)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("ok")


def test_retarget_rejects_a_map_outside_the_code():
    from depyf import _linetable

    code = compile("x = 1", "f.py", "exec")
    with pytest.raises(ValueError):
        _linetable.retarget(code, "g.py", 1, [(len(code.co_code) + 2, 3)])
    with pytest.raises(ValueError):
        _linetable.retarget(code, "g.py", 1, [(0, 0)])
