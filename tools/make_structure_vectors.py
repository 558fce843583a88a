"""Writes tests/c/structure_vectors.inc: small functions covering the
structuring cases (conditions, loops, try, with, async, comprehensions,
nested code, assignments, calls, f-strings, imports), each as the
marshalled code object and the source the decompiler prints for it today.

Only functions whose printed source, recompiled, gives identical bytecode
(the comparison of tests/roundtrip.py) become vectors: the C test then pins
output that is known to be right.  The others are printed as bugs.

    python3 tools/make_structure_vectors.py [PYTHON ...]

Without arguments it uses python3 and /root/.pyenv/versions/3.1{2,3}.*/bin/python
when present.  Each interpreter imports depyf from this checkout, so build
the extension first for each of them:
    DEV_BUILD_SUFFIX=-I tools/dev_build.sh [PYTHON]
(an interpreter without the meson module needs `--native-file F` after
PYTHON, F holding `[binaries]` and `python = 'PYTHON'`, or meson builds the
extension for the python3 it runs on).
"""
import glob
import json
import os
import subprocess
import sys
import textwrap

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "tests", "c", "structure_vectors.inc")

# (label, source of one function named f).  The label names the case in
# the C test's messages.
SNIPPETS = [
    ("if elif else with and/or/not", """
def f(a, b, c):
    if a and b:
        x = 1
    elif a or not c:
        x = 2
    elif not (a and c):
        x = 3
    else:
        x = 4
    return x
"""),
    ("if with mixed and/or groups", """
def f(a, b, c, d):
    if (a or b) and (c or d):
        return 1
    if a and (b or c) and not d:
        return 2
    if not a or b and c:
        print(a)
    return 3
"""),
    ("if without else before a statement", """
def f(x):
    y = 0
    if x:
        y = x * 2
    print(y)
    if x is None:
        pass
    return y
"""),
    ("chained comparison in a condition", """
def f(x, lo, hi):
    if lo <= x < hi:
        return 'in'
    if x < lo < hi <= 10:
        return 'low'
    return 'out'
"""),
    ("chained comparison as a value", """
def f(a, b, c):
    ok = a < b < c
    return ok, a == b != c, a is not b in c
"""),
    ("ternaries", """
def f(a, b):
    x = a if a > b else b
    y = (a if a else b) if b else None
    return x + (1 if y else 0)
"""),
    ("ternary with boolean operators", """
def f(a, b, c):
    return a if b and c else b or c
"""),
    ("boolean operators as values", """
def f(a, b, c):
    x = a and b or c
    y = a or (b and c)
    z = not (a or b)
    return x, y, z
"""),
    ("while with its test repeated at the bottom", """
def f(n):
    total = 0
    while n > 0:
        total += n
        n -= 1
    return total
"""),
    ("while with break, continue and else", """
def f(items):
    i = 0
    while i < len(items):
        i += 1
        if items[i - 1] is None:
            continue
        if items[i - 1] < 0:
            break
    else:
        return -1
    return i
"""),
    ("while True with a break", """
def f(q):
    while True:
        x = q.get()
        if x is None:
            break
        q.put(x)
    return q
"""),
    ("while True returning from inside", """
def f(it):
    while True:
        x = next(it)
        if x > 3:
            return x
"""),
    ("while whose body ends in break", """
def f(x):
    while x:
        x = x.next
        break
    return x
"""),
    ("while with a compound test", """
def f(a, b):
    while a and not b:
        a = a - 1
    while a or b:
        a, b = b, None
    return a
"""),
    ("for with break, continue and else", """
def f(items):
    for x in items:
        if x < 0:
            continue
        if x > 100:
            break
        print(x)
    else:
        print('done')
"""),
    ("for with a tuple target", """
def f(d):
    out = []
    for k, (v, w) in d.items():
        out.append(k + v * w)
    return out
"""),
    ("for returning from inside", """
def f(items, key):
    for x in items:
        if x == key:
            return x
    return None
"""),
    ("nested loops", """
def f(rows):
    n = 0
    for row in rows:
        for cell in row:
            if cell:
                break
            n += 1
        while n > 10:
            n //= 2
    return n
"""),
    ("try/except with a type", """
def f(x):
    try:
        y = int(x)
    except ValueError:
        y = 0
    return y
"""),
    ("except* clauses, with and without as, else and finally", """
def f(g, log):
    try:
        g()
    except* ValueError as e:
        log.append(e)
    except* (TypeError, OSError):
        raise KeyError(1)
    else:
        log.append(0)
    finally:
        log.append(1)
"""),
    ("except* in a loop", """
def f(xs, g):
    for x in xs:
        try:
            if x:
                continue
            g(x)
        except* ValueError:
            pass
    return xs
"""),
    ("bare except", """
def f(g):
    try:
        g()
    except:
        return False
    return True
"""),
    ("several handlers with as", """
def f(g):
    try:
        return g()
    except (KeyError, IndexError) as e:
        print(e)
    except TypeError as e:
        raise ValueError(str(e)) from e
    except Exception:
        pass
    return None
"""),
    ("try/finally with return", """
def f(lock):
    lock.acquire()
    try:
        return lock.value
    finally:
        lock.release()
"""),
    ("try/finally with break and continue", """
def f(items):
    for x in items:
        try:
            if x:
                break
            if x is None:
                continue
            print(x)
        finally:
            print('next')
    return x
"""),
    ("try/except/else/finally", """
def f(g):
    try:
        r = g()
    except OSError as e:
        r = e.errno
    else:
        r += 1
    finally:
        print('cleanup')
    return r
"""),
    ("try/except inside a while loop", """
def f(g, n):
    while n:
        try:
            g(n)
        except ValueError:
            break
        except KeyError:
            continue
        n -= 1
    return n
"""),
    ("nested try", """
def f(g, h):
    try:
        try:
            g()
        except KeyError:
            h()
    except Exception as e:
        return e
    return None
"""),
    ("raise and re-raise", """
def f(x):
    try:
        x()
    except ValueError:
        raise
    if x is None:
        raise TypeError('x')
"""),
    ("with and a target", """
def f(path):
    with open(path) as fh:
        data = fh.read()
    return data
"""),
    ("with several items", """
def f(a, b):
    with open(a) as fa, open(b, 'w') as fb:
        fb.write(fa.read())
"""),
    ("with a tuple target", """
def f(cm):
    with cm() as (x, y):
        print(x, y)
"""),
    ("with returning from inside", """
def f(lock, d):
    with lock:
        return d[0]
"""),
    ("with inside a for loop with continue", """
def f(locks):
    for lock in locks:
        with lock:
            if lock.busy:
                continue
            lock.use()
"""),
    ("async for and async with", """
async def f(src, lock):
    out = []
    async with lock as l:
        async for x in src:
            out.append(await x)
    return out, l
"""),
    ("async for with else and await in a condition", """
async def f(src):
    async for x in src:
        if await x.ready():
            break
    else:
        return None
    return x
"""),
    ("comprehensions with conditions", """
def f(xs):
    a = [x * 2 for x in xs if x > 0 if x % 3]
    b = {x: y for x, y in xs if x and y}
    c = {x for x in xs if not x}
    d = list(x for x in xs if x is not None)
    e = [y for x in xs for y in x if y]
    return a, b, c, d, e
"""),
    ("comprehension with a compound filter", """
def f(xs, lim):
    return [x for x in xs if x > 0 and x < lim or x == -1]
"""),
    ("lambdas", """
def f(xs, k=1):
    key = lambda x, *, r=k: (x[r], -x[0])
    return sorted(xs, key=key), list(map(lambda y: y + k, xs))
"""),
    ("nested defs with defaults", """
def f(base):
    def inner(a, b=2, *args, c, d=4, **kw):
        return base + a + b + c + d + len(args) + len(kw)
    def pos(a, /, b=base):
        return a - b
    return inner(1, c=3), pos(1)
"""),
    ("closures with nonlocal", """
def f():
    count = 0
    def bump(n=1):
        nonlocal count
        count += n
        return count
    return bump
"""),
    ("generators", """
def f(xs):
    for x in xs:
        y = yield x
        if y:
            yield from y
    return len(xs)
"""),
    ("class with methods", """
def f(base):
    class C(base):
        x = 1
        def __init__(self, v):
            super().__init__()
            self.v = v
        def get(self):
            return self.v + self.x
        @staticmethod
        def make():
            return C(0)
    return C
"""),
    ("walrus", """
def f(data):
    if (n := len(data)) > 10:
        return n
    while (chunk := data.read(4)):
        print(chunk)
    return [y for x in data if (y := x * 2)]
"""),
    ("tuple assignments", """
def f(a, b, c):
    a, b = b, a
    a, b, c = c, a, b
    x, (y, *z) = a
    return a, b, c, x, y, z
"""),
    ("augmented assignment to attributes and subscripts", """
def f(obj, d, k):
    obj.count += 1
    d[k] -= 2
    d[k][0] *= 3
    obj.a.b |= 4
    d[1:k] += [5]
    return obj
"""),
    ("star calls", """
def f(g, args, kwargs):
    g(*args)
    g(1, *args, 2, **kwargs)
    g(**kwargs, x=1)
    return g(*args, *args, k=3, **kwargs)
"""),
    ("method calls with keywords", """
def f(obj, x):
    obj.run(x, key=1)
    return obj.m(x)(x).n(y=2)
"""),
    ("f-strings", """
def f(name, value, width):
    a = f'{name}={value!r:>{width}}'
    b = f'{value:.2f} and {name!s} {{literal}}'
    return a + b + f'{value!a}'
"""),
    ("imports", """
def f():
    import os
    import os.path as osp
    from collections import OrderedDict, defaultdict as dd
    import xml.etree.ElementTree
    return os, osp, OrderedDict, dd, xml
"""),
    ("globals, del and assert", """
def f(x, y):
    global G
    G = x
    assert x, 'x must be set'
    assert y
    del x, G
    return y
"""),
    ("collection literals and slices", """
def f(a, b):
    l = [a, b, *a]
    d = {'a': a, **b}
    s = {1, 2, a}
    t = (a, *b)
    return l[1:2], l[::2], l[a:b:-1], d, s, t
"""),
    ("unary and binary operators", """
def f(a, b):
    return -a + ~b * (a ** -b) // (a % b) - (not a), a @ b, a << 2 >> b, a & b ^ a | b
"""),
    ("if and else both returning", """
def f(a, b):
    if not a < b:
        return a
    else:
        return b
"""),
    ("if with only pass in the body", """
def f(a):
    if a:
        pass
    else:
        a = 1
    return a
"""),
    ("boolean operators returned", """
def f(a, b, c):
    if c:
        return a and b
    return a or b and not c
"""),
    ("if inside a loop ending the body", """
def f(xs):
    n = 0
    for x in xs:
        if x:
            n += 1
        else:
            n -= 1
    return n
"""),
    ("loop inside if with else", """
def f(xs, flag):
    if flag:
        while xs:
            xs.pop()
    else:
        for x in xs:
            print(x)
    return xs
"""),
    ("try/except inside for with else", """
def f(paths):
    for p in paths:
        try:
            fh = open(p)
        except OSError:
            continue
        else:
            return fh
    else:
        return None
"""),
    ("try/finally inside while with continue", """
def f(q):
    while q:
        item = q.pop()
        try:
            if not item:
                continue
            print(item)
        finally:
            q.task_done()
"""),
    ("try/except inside with", """
def f(lock, g):
    with lock:
        try:
            g()
        except KeyError as e:
            print(e)
    return lock
"""),
    ("async with several items", """
async def f(a, b):
    async with a as x, b:
        await x.run()
"""),
    ("chained assignment", """
def f(obj):
    x = y = obj.z = [1]
    a = b = None
    return x, y, a, b
"""),
    ("assert with a compound condition", """
def f(a, b):
    assert a and (b or not a), (a, b)
    return a
"""),
    ("decorated nested functions", """
def f(deco, cache):
    @deco
    @cache(3)
    def g(x):
        return x
    return g
"""),
    ("keyword-only arguments of a nested def", """
def f():
    def g(a, *, b, c=3, **rest):
        return a, b, c, rest
    def h(*args, key=None):
        return args, key
    return g, h
"""),
    ("calls with star and separators", """
def f(a, b):
    print(*a, sep='', end='\\n')
    print(*a, *b)
    return max(a, default=0, **b)
"""),
    ("return inside try/finally inside with", """
def f(a, b):
    with a:
        try:
            return b()
        finally:
            a.close()
"""),
    ("continue in an except with finally in a for", """
def f(xs):
    out = []
    for x in xs:
        try:
            v = int(x)
        except ValueError:
            continue
        finally:
            out.append(None)
        out.append(v)
    return out
"""),
    ("while/else around for/else", """
def f(xs, n):
    while n:
        for x in xs:
            if x == n:
                break
        else:
            n -= 1
            continue
        return x
    else:
        return None
"""),
    ("every handler returning", """
def f(g):
    try:
        return g()
    except KeyError:
        return 1
    except Exception:
        return 2
"""),
    ("except star", """
def f(g):
    try:
        g()
    except* ValueError as eg:
        print(eg)
    except* TypeError:
        pass
"""),
    ("conditions as call arguments", """
def f(g, a, b, c):
    return g(a if b else c, b and c or a, key=not a, other=a < b < c)
"""),
    ("comprehensions with ternaries and nested loops", """
def f(rows):
    a = {k: (v if v else -1) for k, v in rows}
    b = sum(x * y for x in rows if x for y in x if y > 0)
    return a, b
"""),
    ("async comprehension and await in conditions", """
async def f(src, pred):
    xs = [x async for x in src if await pred(x)]
    if await pred(xs) and xs:
        return xs
    return [await y for y in xs]
"""),
    ("del of subscripts, slices and attributes", """
def f(d, obj):
    del d[0], d[1:3]
    del obj.attr
    x = 1
    del x
    return d
"""),
    ("string and bytes constants", """
def f():
    s = 'it\\'s "quoted"\\n\\t\\x00\\u00e9'
    b = b'\\x00\\xff\\'q'
    return s, b, 1.5, -0.0, 2j, 10 ** 30, (1, 'a', None), ...
"""),
]

# Runs inside each interpreter with this checkout on sys.path: for every
# snippet, the marshalled code of f, what depyf prints for it, and the
# round-trip outcome (identical / different / uncompilable / raised), one
# JSON line each, after a line naming the snippet (so that a crash in the
# extension points at it).
WORKER = r'''
import ast, json, marshal, sys
import depyf
from tests import roundtrip
def emit(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()
for label, src in json.load(sys.stdin):
    emit({"start": label})
    module = compile(src, "<snippet>", "exec", dont_inherit=True)
    code = next(c for c in module.co_consts if hasattr(c, "co_code"))
    ctx = roundtrip.Context()
    reference = roundtrip.find_function(roundtrip.compile_in_context(ast.parse(src).body, ctx), (), "f")
    printed = []
    def decompile(c):
        printed.append(depyf.decompile(c))
        return printed[-1]
    outcome, detail = roundtrip.roundtrip_one(decompile, code, reference, ctx)
    emit({"label": label, "marshal": marshal.dumps(code).hex(), "printed": "".join(printed),
          "outcome": outcome, "detail": detail})
'''


def interpreters(argv):
    if argv:
        return argv
    found = ["python3"]
    for minor in (12, 13):
        found += sorted(glob.glob("/root/.pyenv/versions/3.%d.*/bin/python" % minor))[-1:]
    return found


def stale_extension(py):
    """A warning when the extension this interpreter imports is older than
    the core's sources (the expectations would describe old behaviour)."""
    so = subprocess.run([py, "-c", "import depyf._core as m; print(m.__file__)"], cwd=ROOT,
                        capture_output=True, text=True)
    if so.returncode != 0:
        return "%s cannot import depyf._core: %s" % (py, so.stderr.strip().splitlines()[-1:])
    built = os.path.getmtime(so.stdout.strip())
    sources = glob.glob(os.path.join(ROOT, "src", "core", "**", "*.[ch]"), recursive=True)
    newer = [s for s in sources if os.path.getmtime(s) > built]
    if newer:
        return "%s: depyf._core is older than %s: rebuild with tools/dev_build.sh" % (
            py, ", ".join(sorted(os.path.relpath(s, ROOT) for s in newer)))
    return None


def run_worker(py):
    """{"minor", "cases"} for every snippet; a snippet whose decompilation
    kills the interpreter is a case with outcome "crashed", and a fresh
    interpreter goes on with the next one."""
    env = dict(os.environ, PYTHONPATH=ROOT)
    minor = int(subprocess.run([py, "-c", "import sys; print(sys.version_info[1])"], capture_output=True,
                               text=True, check=True).stdout)
    cases, todo = [], list(SNIPPETS)
    while todo:
        res = subprocess.run([py, "-c", WORKER], input=json.dumps(todo), capture_output=True, text=True,
                             cwd=ROOT, env=env)
        started = None
        for line in res.stdout.splitlines():
            event = json.loads(line)
            if "start" in event:
                started = event["start"]
            else:
                cases.append(event)
                started = None
        if res.returncode == 0:
            break
        if started is None:  # died outside any snippet: nothing to retry
            raise RuntimeError("%s failed:\n%s" % (py, res.stderr[-2000:]))
        cases.append({"label": started, "marshal": "", "printed": "", "outcome": "crashed",
                      "detail": "exit status %d; %s" % (res.returncode, res.stderr.strip()[-500:])})
        todo = SNIPPETS[len(cases):]
    return {"minor": minor, "cases": cases}


def c_string(s):
    """A C string literal of s, one source line per line of s."""
    pieces, cur = [], ""
    for b in s.encode("utf-8", "surrogatepass"):
        ch = chr(b)
        if ch in '"\\':
            cur += "\\" + ch
        elif ch == "\n":
            pieces.append(cur + "\\n")
            cur = ""
        elif 0x20 <= b < 0x7F and ch != "?":  # "?" avoids trigraphs
            cur += ch
        else:
            cur += "\\%03o" % b
    if cur or not pieces:
        pieces.append(cur)
    return "\n        ".join('"%s"' % p for p in pieces)


def c_bytes(name, data):
    """A byte array as a string literal (its size is len(data) + 1)."""
    rows = ['"%s"' % "".join("\\x%02x" % b for b in data[i:i + 32]) for i in range(0, len(data), 32)]
    return "static const uint8_t %s[] =\n    %s;\n" % (name, "\n    ".join(rows) or '""')


def write_vectors(results, path):
    out = ["/* Generated by tools/make_structure_vectors.py: do not edit. */\n\n"]
    rows = []
    for res in results:
        m = res["minor"]
        for i, case in enumerate(res["cases"]):
            if case["outcome"] != "identical":
                continue
            name = "code_3_%d_%d" % (m, i)
            out.append(c_bytes(name, bytes.fromhex(case["marshal"])))
            rows.append("    {%s, %d, %s, sizeof %s - 1,\n        %s},\n" % (
                c_string(case["label"]), m, name, name, c_string(case["printed"])))
    out.append("\nstatic const structure_vector structure_vectors[] = {\n")
    out += rows
    out.append("};\n")
    with open(path, "w") as fh:
        fh.write("".join(out))
    return len(rows)


def main(argv):
    results = []
    for py in interpreters(argv):
        warning = stale_extension(py)
        if warning:
            print("warning:", warning)
        results.append(run_worker(py))
    n = write_vectors(results, OUT)
    print("wrote %d vectors to %s" % (n, os.path.relpath(OUT, ROOT)))
    for res in results:
        bad = [c for c in res["cases"] if c["outcome"] != "identical"]
        print("Python 3.%d: %d of %d snippets round-trip identically" % (
            res["minor"], len(res["cases"]) - len(bad), len(res["cases"])))
        for c in bad:
            print("\n--- 3.%d %s [%s] %s\n%s" % (res["minor"], c["label"], c["outcome"], c["detail"],
                                               textwrap.indent(c["printed"], "    ")))


if __name__ == "__main__":
    main(sys.argv[1:])
