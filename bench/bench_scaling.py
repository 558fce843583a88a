"""How decompilation time and memory grow with the size of the bytecode.

    python bench/bench_scaling.py [--sizes 1000,10000,100000] [--shapes ...]

Builds synthetic functions of about 1k, 10k and 100k instructions in a few
shapes (straight-line code, if/else chains, loops, nested blocks, try/except,
try/finally, with, except clauses that return, conditions mixed with try;
under 3.8-3.10 the try shapes are block-stack code), decompiles each once in
a fresh process and prints the time and the peak memory the decompilation
added (the process's RSS high-water mark, reset just before, over its RSS
then; Linux only).  The
per-instruction columns should stay about flat from one size to the next:
that is what "linear" means here.  Run with the extension built for the
interpreter (tools/dev_build.sh).

Hostile shapes (issue 17), built as code objects no compiler writes, the
instructions counted being those of the input (each shared object once):
- shared: 40 levels of functions, each making the one below it twice (one
  code object per level, as marshal references share them): 2**40 uses;
  it must end at the work limit, in time in proportion to the input;
- exc_overlap (3.11+): exception-table entries that all overlap (each from
  a later instruction to the end);
- deep_stack: a stack as deep as half the function, then stores, printed as
  the state machine of the fallback.
The last two were quadratic until the control-flow graph of issue 15
(docs/limits.md): their time per instruction now stays about flat too.
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


def _cache_entries(op):
    caches = getattr(__import__("opcode"), "_inline_cache_entries", None)
    if caches is None:
        return 0  # before 3.11
    return caches.get(dis.opname[op], 0) if isinstance(caches, dict) else caches[op]


def assemble(ops):
    """Wordcode of (opname, arg) pairs for the running Python (EXTENDED_ARGs and
    3.11+ CACHE entries included), and the code unit each instruction starts at."""
    out, starts = bytearray(), []
    for name, arg in ops:
        op = dis.opmap[name]
        starts.append(len(out) // 2)
        for shift in (24, 16, 8):
            if arg >> shift:
                out += bytes([dis.opmap["EXTENDED_ARG"], (arg >> shift) & 0xFF])
        out += bytes([op, arg & 0xFF]) + b"\0\0" * _cache_entries(op)
    return bytes(out), starts


def _two_locals():
    def f(x):
        y = x
        return y
    return f.__code__


def _shared(target):
    levels = 40
    pad = "".join("    y = x\n" for _ in range(max(1, target // levels // 2)))
    maker = _compile("def f(x):\n" + pad + "    def g(x):\n        pass\n    def h(x):\n        pass\n    return y\n")
    code = _compile("def f(x):\n" + pad + "    return y\n")
    for _ in range(levels):
        code = maker.replace(co_consts=tuple(code if hasattr(c, "co_code") else c for c in maker.co_consts))
    return code, {}


def _exc_overlap(target):
    if sys.version_info < (3, 11):
        return None, {}
    pairs = max(1, target // 2)
    body = [("RESUME", 0)] + [op for _ in range(pairs) for op in (("LOAD_FAST", 0), ("STORE_FAST", 1))]
    ops = body + [("LOAD_CONST", 0), ("RETURN_VALUE", 0),
                  ("PUSH_EXC_INFO", 0), ("POP_TOP", 0), ("POP_EXCEPT", 0), ("LOAD_CONST", 0), ("RETURN_VALUE", 0)]
    code, starts = assemble(ops)
    end, handler = starts[len(body)], starts[len(body) + 2]
    sys.path.insert(0, os.path.join(REPO, "tests"))
    import exception_table
    table = b"".join(exception_table.entry(starts[k], end - starts[k], handler, 0) for k in range(1, len(body), 2))
    return _two_locals().replace(co_code=code, co_exceptiontable=table, co_consts=(None,),
                                 co_stacksize=2, co_linetable=b""), {}


def _deep_stack(target):
    depth = max(1, target // 4)
    ops = ([("LOAD_FAST", 0)] * depth + [op for _ in range(depth) for op in (("LOAD_FAST", 0), ("STORE_FAST", 1))]
           + [("POP_TOP", 0)] * depth + [("LOAD_CONST", 0), ("RETURN_VALUE", 0)])
    if sys.version_info >= (3, 11):
        ops.insert(0, ("RESUME", 0))
    code, _ = assemble(ops)
    return _two_locals().replace(co_code=code, co_consts=(None,), co_stacksize=depth + 1,
                                 co_linetable=b"", **({"co_exceptiontable": b""} if sys.version_info >= (3, 11) else {})
                                 ), {"force_fallback": True}


# Shape -> builder of (code object, options of _core.decompile) for about
# `target` instructions, or (None, ...) where the shape has no meaning.
CODE_SHAPES = {"shared": _shared, "exc_overlap": _exc_overlap, "deep_stack": _deep_stack}


def unique_instructions(code):
    seen, todo, n = set(), [code], 0
    while todo:
        c = todo.pop()
        if id(c) in seen:
            continue
        seen.add(id(c))
        n += count_instructions(c)
        todo.extend(k for k in c.co_consts if hasattr(k, "co_code"))
    return n


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


def child(path, n, options):
    """Runs in a fresh process: decompiles the marshalled code object at
    `path` (loading it costs far less memory than compiling it, so the
    high-water mark that follows is the decompiler's), prints a JSON line."""
    import marshal
    import time
    sys.path.insert(0, REPO)
    import depyf
    from depyf import _core
    with open(path, "rb") as f:
        code = marshal.load(f)
    options = json.loads(options)
    before = start_peak_window()
    t0 = time.perf_counter()
    try:
        out = _core.decompile(code, **options) if options else depyf.decompile(code)
        status = "ok"
    except (depyf.DecompilationError, MemoryError) as e:
        out, status = "", "error: %s" % str(e)[:60]
    elapsed = time.perf_counter() - t0
    peak = status_kib("VmHWM") - before
    print(json.dumps({"instructions": n, "seconds": elapsed, "peak_kib": peak,
                      "out_lines": out.count("\n"), "status": status}))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="1000,10000,100000")
    ap.add_argument("--shapes", default=",".join([*SHAPES, *CODE_SHAPES]))
    ap.add_argument("--timeout", type=float, default=600)
    ap.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(args.child[0], int(args.child[1]), args.child[2])
        return
    import marshal
    import tempfile
    print("Python %d.%d" % sys.version_info[:2])
    print("%-9s %8s %9s %9s %10s %9s  %s" % ("shape", "instrs", "time s", "us/instr", "peak MiB",
                                             "B/instr", "status"))
    for shape in args.shapes.split(","):
        for size in [int(s) for s in args.sizes.split(",")]:
            if shape in CODE_SHAPES:
                code, options = CODE_SHAPES[shape](size)
                if code is None:
                    print("%-9s (not for Python %d.%d)" % ((shape,) + sys.version_info[:2]))
                    break
                n = unique_instructions(code)
            else:
                src, n = build(shape, size)
                code, options = _compile(src), {}
            with tempfile.NamedTemporaryFile(suffix=".marshal") as f:
                f.write(marshal.dumps(code))
                f.flush()
                try:
                    res = subprocess.run([sys.executable, os.path.abspath(__file__), "--child", f.name, str(n),
                                          json.dumps(options)],
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
