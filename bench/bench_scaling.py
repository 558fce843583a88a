"""How decompilation time and memory grow with the size of the bytecode.

    python bench/bench_scaling.py [--sizes 1000,10000,100000] [--shapes ...]

Builds synthetic functions of about 1k, 10k and 100k instructions in a few
shapes (straight-line code, if/else chains, loops, nested blocks, try/except,
try/finally, with, except clauses that return, conditions mixed with try;
under 3.8-3.10 the try shapes are block-stack code), and two shapes no
compiler writes, made by rewriting bytecode: `overlap`, a try body covered by
overlapping exception-table entries, one more for every other instruction
(3.11+), and `deep`, a stack as deep as half the function whose values are
then stored one by one (the state machine of fallback.c), decompiles each once in
a fresh process and prints the time and the peak memory the decompilation
added (the process's RSS high-water mark, reset just before, over its RSS
then; Linux only).  The
per-instruction columns should stay about flat from one size to the next:
that is what "linear" means here.  Run with the extension built for the
interpreter (tools/dev_build.sh).
"""
import argparse
import dis
import json
import os
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# One repeated unit of source per shape; `{i}` numbers each copy.
SHAPES = {
    "straight": "    y = y * {i} + x\n",
    "branches": ("    if x > {i}:\n        y = y + {i}\n    elif x < -{i}:\n        y = y - 1\n"
                 "    else:\n        y = -y\n"),
    "loops": "    for k in range(x):\n        if k == {i}:\n            break\n        y += k\n",
    "nested": ("    while y < {i}:\n        if x:\n            for k in x:\n                y += k\n"
               "        else:\n            y += 1\n"),
    "try": "    try:\n        y = y // x\n    except ZeroDivisionError as e:\n        y = {i}\n",
    "finally": "    try:\n        y = y // x\n    finally:\n        y = y + {i}\n",
    "with": "    with x as k:\n        y = y + k * {i}\n",
    # clauses that return: 3.10 and 3.12+ copy the code after the try into
    # them, and the decompiler looks for where those copies come from
    "try_return": "    try:\n        y = y // x\n    except ZeroDivisionError:\n        return {i}\n",
    # a condition before each try: every condition is tried speculatively,
    # which must not cost in proportion to the tries of the function
    "if_try": ("    if x > {i}:\n        y = 1\n"
               "    try:\n        y = y // x\n    except ZeroDivisionError:\n        y = {i}\n"),
}


# ---- shapes no compiler writes: code objects rewritten at the bytecode level

def _assemble(ops):
    """Bytecode of (opname, arg) pairs for the running interpreter, with
    EXTENDED_ARG prefixes and inline caches."""
    caches = getattr(dis, "_inline_cache_entries", None)
    out = bytearray()
    for name, arg in ops:
        op = dis.opmap[name]
        for shift in (24, 16, 8):
            if arg >> shift:
                out += bytes([dis.opmap["EXTENDED_ARG"], (arg >> shift) & 0xFF])
        out += bytes([op, arg & 0xFF])
        if caches is not None:
            out += b"\0\0" * (caches[op] if isinstance(caches, list) else caches.get(name, 0))
    return bytes(out)


def _replace(code, **fields):
    """code.replace without the line table (and exception table) of the old code."""
    if sys.version_info >= (3, 10):
        fields.setdefault("co_linetable", b"")
    else:
        fields.setdefault("co_lnotab", b"")
    if sys.version_info >= (3, 11):
        fields.setdefault("co_exceptiontable", b"")
    return code.replace(**fields)


def deep_stack(target):
    """`deep`: n loads of x, then n stores into v0..v(n-1), then return v0."""
    def f(x):
        return x
    n = max(2, target // 2)
    prologue = [("RESUME", 0)] if sys.version_info >= (3, 11) else []
    ops = prologue + [("LOAD_FAST", 0)] * n + [("STORE_FAST", 1 + k) for k in range(n)]
    ops += [("LOAD_FAST", 1), ("RETURN_VALUE", 0)]
    names = ("x",) + tuple("v%d" % k for k in range(n))
    return _replace(f.__code__, co_code=_assemble(ops), co_varnames=names, co_nlocals=len(names),
                    co_stacksize=n + 1)


def _exctable(entries):
    """3.11+ exception table: (start, length, target, depth, lasti) in code units."""
    def varint(v, first):
        groups = [v & 63]
        while v >> 6:
            v >>= 6
            groups.append(v & 63)
        groups.reverse()
        out = bytearray(g | (64 if k < len(groups) - 1 else 0) for k, g in enumerate(groups))
        if first:
            out[0] |= 128
        return bytes(out)
    return b"".join(varint(s, True) + varint(l, False) + varint(t, False) + varint(d << 1 | lasti, False)
                    for s, l, t, d, lasti in entries)


def overlapping_entries(target):
    """`overlap`: one try statement whose body every other instruction
    starts another exception-table entry covering the rest of it."""
    copies = max(1, target // 7)
    src = ("def f(x):\n    y = 0\n    try:\n" + "".join("        y = y * %d + x\n" % i for i in range(copies)) +
           "    except Exception:\n        y = -1\n    return y\n")
    code = _compile(src)
    entries = list(dis._parse_exception_table(code))
    body = entries[0]
    start, end = body.start // 2, body.end // 2
    ins = [i for i in dis.get_instructions(code) if i.opname != "CACHE"]
    starts = [i.offset // 2 for k, i in enumerate(ins)
              if start <= i.offset // 2 < end and (k == 0 or ins[k - 1].opname != "EXTENDED_ARG")]
    table = [(s, end - s, body.target // 2, body.depth, int(body.lasti)) for s in starts[::2]]
    table += [(e.start // 2, (e.end - e.start) // 2, e.target // 2, e.depth, int(e.lasti)) for e in entries[1:]]
    return code.replace(co_exceptiontable=_exctable(table))


# name -> (builder of a code object of about `target` instructions, least Python)
HOSTILE = {"overlap": (overlapping_entries, (3, 11)), "deep": (deep_stack, (3, 8))}


def source(shape, copies):
    body = "".join(SHAPES[shape].format(i=i) for i in range(copies))
    return "def f(x):\n    y = 0\n" + body + "    return y\n"


def count_instructions(code):
    return sum(1 for ins in dis.get_instructions(code) if ins.opname != "CACHE")


def build(shape, target):
    """(source, instruction count) of a function of about `target` instructions."""
    one = count_instructions(_compile(source(shape, 1)))
    base = count_instructions(_compile(source(shape, 0)))
    copies = max(1, round((target - base) / max(1, one - base)))
    src = source(shape, copies)
    return src, count_instructions(_compile(src))


def _compile(src):
    ns = {}
    exec(compile(src, "<bench>", "exec"), ns)
    return ns["f"].__code__


def status_kib(field):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise RuntimeError("no %s in /proc/self/status" % field)


def start_peak_window():
    """Current RSS (KiB) after handing free heap back to the system and
    resetting the high-water mark, so that VmHWM later is the peak since."""
    import ctypes
    try:
        ctypes.CDLL(None).malloc_trim(0)
    except (OSError, AttributeError):
        pass  # not glibc: the figure may read low
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")  # resets VmHWM to the current RSS
    return status_kib("VmRSS")


def child(path, n):
    """Runs in a fresh process: decompiles the marshalled code object at
    `path` (loading it costs far less memory than compiling it, so the
    high-water mark that follows is the decompiler's), prints a JSON line."""
    import marshal
    import time
    sys.path.insert(0, REPO)
    import depyf
    with open(path, "rb") as f:
        code = marshal.load(f)
    before = start_peak_window()
    t0 = time.perf_counter()
    try:
        out = depyf.decompile(code)
        status = "ok"
    except depyf.DecompilationError as e:
        out, status = "", "error: %s" % str(e)[:60]
    elapsed = time.perf_counter() - t0
    peak = status_kib("VmHWM") - before
    print(json.dumps({"instructions": n, "seconds": elapsed, "peak_kib": peak,
                      "out_lines": out.count("\n"), "status": status}))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="1000,10000,100000")
    ap.add_argument("--shapes", default=",".join(list(SHAPES) + list(HOSTILE)))
    ap.add_argument("--timeout", type=float, default=600)
    ap.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(args.child[0], int(args.child[1]))
        return
    import marshal
    import tempfile
    print("Python %d.%d" % sys.version_info[:2])
    print("%-9s %8s %9s %9s %10s %9s  %s" % ("shape", "instrs", "time s", "us/instr", "peak MiB",
                                             "B/instr", "status"))
    for shape in args.shapes.split(","):
        if shape in HOSTILE and sys.version_info < HOSTILE[shape][1]:
            print("%-9s needs Python %d.%d+" % ((shape,) + HOSTILE[shape][1]))
            continue
        for size in [int(s) for s in args.sizes.split(",")]:
            if shape in HOSTILE:
                code = HOSTILE[shape][0](size)
                n = count_instructions(code)
            else:
                src, n = build(shape, size)
                code = _compile(src)
            with tempfile.NamedTemporaryFile(suffix=".marshal") as f:
                f.write(marshal.dumps(code))
                f.flush()
                try:
                    res = subprocess.run([sys.executable, os.path.abspath(__file__), "--child", f.name, str(n)],
                                         stdout=subprocess.PIPE, universal_newlines=True, timeout=args.timeout)
                except subprocess.TimeoutExpired:
                    print("%-9s %8d  timed out after %.0f s" % (shape, n, args.timeout))
                    continue
            try:
                r = json.loads(res.stdout.strip().splitlines()[-1])
            except (IndexError, ValueError):
                print("%-9s %8d  crashed (exit %d)" % (shape, n, res.returncode))
                continue
            print("%-9s %8d %9.3f %9.2f %10.1f %9.0f  %s" % (
                shape, n, r["seconds"], 1e6 * r["seconds"] / n, r["peak_kib"] / 1024,
                1024 * r["peak_kib"] / n, r["status"]), flush=True)


if __name__ == "__main__":
    main()
