"""How printing grows with the number of constants that have no literal form.

    python bench/bench_nonliteral_consts.py [--sizes 5000,20000,80000]

Dynamo's code (and a hostile .pyc) can load many objects with no literal
form; each prints as a name `_depyf_const_<k>` (see src/core/print.h).  This
builds `def f(g): g(<c0>); g(<c1>); ...` whose constants are distinct code
objects and times one decompilation per size: the per-load column should
stay about flat.  Not a test: nothing here asserts.
"""
import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from depyf import _core  # noqa: E402


def function_with_loads(n):
    first = 10 ** 6
    ns = {}
    exec("def f(g):\n" + "".join("    g(%d)\n" % (first + i) for i in range(n)), ns)
    code = ns["f"].__code__
    inner = {first + i: compile("def g%d(): pass" % i, "<bench>", "exec").co_consts[0] for i in range(n)}
    return code.replace(co_consts=tuple(inner.get(c, c) if type(c) is int else c for c in code.co_consts))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="5000,20000,80000")
    args = ap.parse_args()
    print("%8s %10s %14s" % ("loads", "seconds", "us per load"))
    for n in (int(s) for s in args.sizes.split(",")):
        code = function_with_loads(n)
        start = time.perf_counter()
        _core.decompile(code, validate=False)
        took = time.perf_counter() - start
        print("%8d %10.3f %14.2f" % (n, took, 1e6 * took / n))


if __name__ == "__main__":
    main()
