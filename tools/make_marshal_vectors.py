"""Writes the test vectors of the marshal and .pyc readers as C source:

  tests/c/marshal_vectors.inc  values of every marshal type code, each with
                               the repr CPython gives it, and per version a
                               marshalled module with the fields of each of
                               its code objects as that interpreter sees them
  tests/c/pyc_vectors.inc      per version a .pyc file of the same module,
                               with the opcode names `dis` lists for each of
                               its code objects

Every expectation comes from the interpreter that wrote the data, so the C
tests compare the reader with CPython, not with itself.

    python3 tools/make_marshal_vectors.py [PYTHON ...]

Without arguments it uses /root/.pyenv/versions/3.{8..13}.*/bin/python.
"""
import glob
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# The module whose code objects are embedded: arguments of every kind,
# closures, a comprehension, try/except/finally, with, async, a class with
# super(), constants of many types, and a jump long enough for EXTENDED_ARG.
MODULE_SOURCE = '''\
import sys
from os import path as p
K = (2 ** 70, -(2 ** 64), 1.5e-7, 3 - 4j, b"\\x00'\\xff", "h\\u00e9\\ud800", None, ...)
def f(a, b=2, /, c=3, *args, d, e=5, **kw):
    total = a + b
    def g(x):
        nonlocal total
        total += x
        return [y * total for y in range(x) if y % 2]
    try:
        g(c)
    except (ValueError, TypeError) as exc:
        raise RuntimeError(str(exc)) from exc
    finally:
        del args
    with open(p.join("a", "b")) as fh:
        fh.read()
    return lambda q: q in {1, 2, 3}
class Klass(dict):
    attr: int = 1
    def m(self):
        return super().m() if self else {k: v for k, v in self.items()}
    async def am(self):
        async for i in self:
            await i
def long_jump(x):
    if x:
''' + "        x = x * 3 + x * 5\n" * 35 + '''\
    return x
while sys.argv:
    if len(sys.argv) > 3:
        break
    sys.argv.pop()
'''

# Runs inside each interpreter: compiles MODULE_SOURCE into a .pyc and
# reports the bytes, the fields of every code object and dis's opnames.
PER_VERSION = r'''
import dis, importlib.util, json, marshal, os, py_compile, sys, tempfile
src = sys.stdin.read()
with tempfile.TemporaryDirectory() as d:
    path = os.path.join(d, "vec.py")
    with open(path, "w") as fh:
        fh.write(src)
    pyc = py_compile.compile(path, cfile=os.path.join(d, "vec.pyc"), dfile="vec.py", doraise=True)
    with open(pyc, "rb") as fh:
        data = fh.read()
def walk(co):
    yield co
    for c in co.co_consts:
        if hasattr(c, "co_code"):
            yield from walk(c)
codes = []
for c in walk(marshal.loads(data[16:])):
    codes.append({
        "name": c.co_name, "qualname": getattr(c, "co_qualname", c.co_name),
        "filename": c.co_filename, "firstlineno": c.co_firstlineno,
        "argcount": c.co_argcount, "posonlyargcount": c.co_posonlyargcount,
        "kwonlyargcount": c.co_kwonlyargcount, "stacksize": c.co_stacksize, "flags": c.co_flags,
        "names": list(c.co_names), "varnames": list(c.co_varnames),
        "cellvars": list(c.co_cellvars), "freevars": list(c.co_freevars),
        "nconsts": len(c.co_consts), "code": c.co_code.hex(),
        "linetable": (c.co_linetable if sys.version_info >= (3, 10) else c.co_lnotab).hex(),
        "exctable": getattr(c, "co_exceptiontable", b"").hex(),
        "opnames": [i.opname for i in dis.get_instructions(c)],
    })
json.dump({"minor": sys.version_info[1], "pyc": data.hex(), "codes": codes}, sys.stdout)
'''

# Values of every type code; the marshal data and repr come from the
# interpreter running this script.
VALUES = r'''
import json, marshal, struct, sys
shared = (1.5,)
cases = [
    ("None", None), ("True", True), ("False", False), ("Ellipsis", ...),
    ("int 0", 0), ("int -1", -1), ("int 2**31-1", 2**31 - 1), ("int -2**31", -2**31),
    ("long 2**31", 2**31), ("long 2**63-1", 2**63 - 1), ("long -2**63", -2**63),
    ("long 2**63", 2**63), ("long -2**64", -2**64), ("long 10**40", 10**40),
    ("long -(2**100+5)", -(2**100 + 5)),
    ("float 0.0", 0.0), ("float -0.0", -0.0), ("float 1.5", 1.5), ("float 0.1", 0.1),
    ("float 1e16", 1e16), ("float 1e15", 1e15), ("float 1e-5", 1e-5), ("float 1e-4", 1e-4),
    ("float 1e300", 1e300), ("float 5e-324", 5e-324), ("float inf", float("inf")),
    ("float -inf", float("-inf")), ("float nan", float("nan")), ("float 123456.789", 123456.789),
    ("complex 1+2j", 1 + 2j), ("complex 2j", 2j), ("complex -0-1j", complex(-0.0, -1.0)),
    ("complex 0-0j", complex(0.0, -0.0)), ("complex 1.5+infj", complex(1.5, float("inf"))),
    ("bytes empty", b""), ("bytes mixed", b"a'b\x00\xff\n\\"), ("bytes quotes", b"'\""),
    ("str empty", ""), ("str short ascii", "hello world"), ("str ascii 300", "x" * 300),
    ("str interned short", sys.intern("an_identifier")), ("str interned long", sys.intern("y" * 300)),
    ("str unicode", "h\u00e9llo \u4e16\u754c \U0001f600"), ("str surrogate", "a\ud800b"),
    ("str escapes", "tab\there\nnl 'q' \\ \x7f \x85 \xa0 \u200b"), ("str dquote", "it's"),
    ("str interned unicode", sys.intern("\u00e9t\u00e9")),
    ("tuple empty", ()), ("tuple one", (1,)), ("tuple nested", (1, "a", (2.5, (None,)))),
    ("tuple 300", tuple(range(300))),
    ("list", [1, "two", [3]]), ("list empty", []),
    ("dict", {"a": 1, "b": (2,)}), ("dict empty", {}),
    ("set", {7}), ("set empty", set()),
    ("frozenset", frozenset({1, 2})), ("frozenset empty", frozenset()),
    ("refs shared tuple", (shared, shared, shared)),
    ("refs interned strings", (sys.intern("abc"), sys.intern("abc"))),
]
out = []
for label, v in cases:
    r = repr(v)
    if type(v) is int and not -2**63 <= v < 2**63:
        r = ("-" if v < 0 else "") + hex(abs(v))  # the model keeps big ints in hex
    out.append({"label": label, "data": marshal.dumps(v).hex(), "repr": r, "kind": type(v).__name__})
# forms marshal.dumps no longer writes but CPython still reads
out.append({"label": "float text form", "data": marshal.dumps(2.25, 1).hex(), "repr": "2.25", "kind": "float"})
out.append({"label": "complex text form", "data": marshal.dumps(-1.5 + 0.5j, 1).hex(),
            "repr": "(-1.5+0.5j)", "kind": "complex"})
for n in (0, -5, 2**40, -2**63, 2**63 - 1):
    out.append({"label": "TYPE_INT64 %d" % n, "data": (b"I" + struct.pack("<q", n)).hex(), "repr": str(n),
                "kind": "int"})
out.append({"label": "StopIteration", "data": marshal.dumps(StopIteration).hex(), "repr": "StopIteration",
            "kind": "other"})
json.dump(out, sys.stdout)
'''

KINDS = {
    "NoneType": "DP_CONST_NONE", "bool": None, "ellipsis": "DP_CONST_ELLIPSIS", "int": "DP_CONST_INT",
    "float": "DP_CONST_FLOAT", "complex": "DP_CONST_COMPLEX", "bytes": "DP_CONST_BYTES", "str": "DP_CONST_STR",
    "tuple": "DP_CONST_TUPLE", "frozenset": "DP_CONST_FROZENSET", "list": "DP_CONST_OTHER",
    "dict": "DP_CONST_OTHER", "set": "DP_CONST_OTHER", "other": "DP_CONST_OTHER",
}


def c_string(s):
    """A C string literal of the UTF-8 bytes of s (surrogates passed through)."""
    out = '"'
    for b in s.encode("utf-8", "surrogatepass"):
        ch = chr(b)
        if ch in '"\\':
            out += "\\" + ch
        elif 0x20 <= b < 0x7F and ch != "?":  # "?" avoids trigraphs
            out += ch
        else:
            out += "\\%03o" % b
    return out + '"'


def c_bytes(name, data):
    """A byte array as a string literal (its size is len(data) + 1)."""
    rows = ['"%s"' % "".join("\\x%02x" % b for b in data[i:i + 32]) for i in range(0, len(data), 32)]
    return "static const uint8_t %s[] =\n    %s;\n" % (name, "\n    ".join(rows) or '""')


def fnv1a(data):
    """64-bit FNV-1a, as fnv1a() in tests/c/test_marshal.c computes it."""
    h = 0xCBF29CE484222325
    for b in data:
        h = ((h ^ b) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h


def c_words(words):
    return c_string(" ".join(words))


def interpreters(argv):
    if argv:
        return argv
    found = {}
    for py in sorted(glob.glob("/root/.pyenv/versions/3.*/bin/python")):
        minor = int(py.split("/")[-3].split(".")[1])
        if 8 <= minor <= 13:
            found[minor] = py
    return [found[m] for m in sorted(found)]


def run(py, script, stdin=""):
    res = subprocess.run([py, "-c", script], input=stdin, capture_output=True, text=True, check=True)
    return json.loads(res.stdout)


HEADER = "/* Generated by tools/make_marshal_vectors.py: do not edit. */\n"


def write_marshal_vectors(values, versions, path):
    out = [HEADER, "\n"]
    for i, v in enumerate(values):
        out.append(c_bytes("value_%d" % i, bytes.fromhex(v["data"])))
    out.append("\nstatic const value_vector value_vectors[] = {\n")
    for i, v in enumerate(values):
        kind = KINDS[v["kind"]] or ("DP_CONST_TRUE" if v["repr"] == "True" else "DP_CONST_FALSE")
        out.append("    {%s, value_%d, sizeof value_%d - 1, %s, %s},\n" % (c_string(v["label"]), i, i, kind,
                                                                     c_string(v["repr"])))
    out.append("};\n\n")
    for ver in versions:
        m = ver["minor"]
        out.append(c_bytes("module_3_%d" % m, bytes.fromhex(ver["pyc"])[16:]))
        out.append("static const code_fields codes_3_%d[] = {\n" % m)
        for j, c in enumerate(ver["codes"]):
            arrays = ", ".join("{%d, 0x%016xu}" % (len(c[f]) // 2, fnv1a(bytes.fromhex(c[f])))
                               for f in ("code", "linetable", "exctable"))
            out.append("    {%s, %s, %s, %d, %d, %d, %d, %d, %d,\n     %s, %s, %s, %s, %d,\n     %s},\n" % (
                c_string(c["name"]), c_string(c["qualname"]), c_string(c["filename"]), c["firstlineno"],
                c["argcount"], c["posonlyargcount"], c["kwonlyargcount"], c["stacksize"], c["flags"],
                c_words(c["names"]), c_words(c["varnames"]), c_words(c["cellvars"]), c_words(c["freevars"]),
                c["nconsts"], arrays))
        out.append("};\n\n")
    out.append("static const module_vector module_vectors[] = {\n")
    for ver in versions:
        m = ver["minor"]
        out.append("    {%d, module_3_%d, sizeof module_3_%d - 1, codes_3_%d, sizeof codes_3_%d / sizeof *codes_3_%d},\n"
                   % (m, m, m, m, m, m))
    out.append("};\n")
    with open(path, "w") as fh:
        fh.write("".join(out))


def write_pyc_vectors(versions, path):
    out = [HEADER, "\n"]
    for ver in versions:
        m = ver["minor"]
        out.append(c_bytes("pyc_3_%d" % m, bytes.fromhex(ver["pyc"])))
    out.append("\nstatic const pyc_vector pyc_vectors[] = {\n")
    for ver in versions:
        m = ver["minor"]
        listing = "".join("%s: %s\n" % (c["name"], " ".join(c["opnames"])) for c in ver["codes"])
        out.append("    {%d, pyc_3_%d, sizeof pyc_3_%d - 1,\n     %s},\n" % (m, m, m, c_string(listing)))
    out.append("};\n")
    with open(path, "w") as fh:
        fh.write("".join(out))


def main(argv):
    pys = interpreters(argv)
    versions = [run(py, PER_VERSION, MODULE_SOURCE) for py in pys]
    values = run(sys.executable, VALUES)
    write_marshal_vectors(values, versions, os.path.join(ROOT, "tests", "c", "marshal_vectors.inc"))
    write_pyc_vectors(versions, os.path.join(ROOT, "tests", "c", "pyc_vectors.inc"))
    print("wrote vectors for Python %s" % ", ".join("3.%d" % v["minor"] for v in versions))


if __name__ == "__main__":
    main(sys.argv[1:])
