"""Writes the seed corpora of the fuzz harnesses from the project's fixtures.

    python3 fuzz/make_seeds.py OUTDIR

OUTDIR/reader/ and OUTDIR/pipeline/ receive, in each harness's input format
(fuzz/harness.h):
  * the byte strings pinned in tests/c/*_vectors.inc (.pyc files, marshalled
    values and code objects of 3.8-3.13, made by CPython);
  * the project's Python test sources compiled by every interpreter found
    (under ~/.pyenv, else python3.X on PATH), each code object marshalled alone;
  * for the pipeline's generator mode, fixed pseudo-random byte strings.
Only the standard library is used; versions without an interpreter still get
the .inc vectors.
"""
import glob
import hashlib
import os
import random
import re
import shutil
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIXTURE_SOURCES = ["tests/behaviour_cases.py", "tests/behaviour_cases_match.py",
                   "tests/roundtrip_fakes.py", "examples/*.py"]

# Runs under the target interpreter: every code object of the given files,
# marshalled one by one, as "<len>\n<bytes>" records on stdout.
DUMP = r"""
import marshal, sys
def walk(co):
    yield co
    for c in co.co_consts:
        if hasattr(c, "co_code"):
            yield from walk(c)
out = sys.stdout.buffer
for path in sys.argv[1:]:
    try:
        top = compile(open(path, encoding="utf-8").read(), path, "exec")
    except SyntaxError:
        continue  # a construct newer than this interpreter
    for co in walk(top):
        data = marshal.dumps(co)
        out.write(b"%d\n" % len(data) + data)
"""


def write(outdir, harness, data):
    path = os.path.join(outdir, harness, hashlib.sha1(data).hexdigest()[:16])
    with open(path, "wb") as f:
        f.write(data)


def inc_vectors():
    """(name, bytes) of every `static const uint8_t name[] = "..."` in tests/c/*.inc."""
    rx = re.compile(r'static const uint8_t (\w+)\[\] =\s*((?:"(?:[^"\\]|\\.)*"\s*)+);')
    for path in sorted(glob.glob(os.path.join(REPO, "tests/c/*.inc"))):
        text = open(path, encoding="utf-8").read()
        for m in rx.finditer(text):
            body = "".join(re.findall(r'"((?:[^"\\]|\\.)*)"', m.group(2)))
            yield m.group(1), body.encode("latin-1").decode("unicode_escape").encode("latin-1")


def minor_of(name):
    m = re.search(r"_3_(\d+)", name)
    return int(m.group(1)) if m else 11  # version-neutral values: any reader


def interpreters():
    for minor in range(8, 14):
        cands = sorted(glob.glob(os.path.expanduser("~/.pyenv/versions/3.%d.*/bin/python" % minor)))
        found = cands[-1] if cands else shutil.which("python3.%d" % minor)
        if found:
            yield minor, found


def compiled_fixtures():
    files = [p for pat in FIXTURE_SOURCES for p in sorted(glob.glob(os.path.join(REPO, pat)))]
    for minor, exe in interpreters():
        res = subprocess.run([exe, "-c", DUMP] + files, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        if res.returncode != 0:  # e.g. a pyenv shim without its version
            continue
        data, pos = res.stdout, 0
        while pos < len(data):
            nl = data.index(b"\n", pos)
            n = int(data[pos:nl])
            yield minor, data[nl + 1:nl + 1 + n]
            pos = nl + 1 + n


def main():
    outdir = sys.argv[1]
    for h in ("reader", "pipeline"):
        shutil.rmtree(os.path.join(outdir, h), ignore_errors=True)
        os.makedirs(os.path.join(outdir, h))
    count = 0
    for name, data in inc_vectors():
        minor = minor_of(name)
        if name.startswith("pyc_"):
            write(outdir, "reader", bytes([0]) + data)
        else:
            write(outdir, "reader", bytes([minor - 7]) + data)
            if data[:1] in (b"c", b"\xe3"):  # a code object
                write(outdir, "pipeline", bytes([1, minor - 8]) + data)
        count += 1
    for minor, data in compiled_fixtures():
        write(outdir, "reader", bytes([minor - 7]) + data)
        write(outdir, "pipeline", bytes([1, minor - 8]) + data)
        count += 1
    rng = random.Random(20240601)
    for k in range(60):
        write(outdir, "pipeline", bytes([2 * rng.randrange(128), k % 6]) +
              bytes(rng.randrange(256) for _ in range(rng.randrange(16, 600))))
    print("seeds from %d fixtures in %s" % (count, outdir))


if __name__ == "__main__":
    main()
