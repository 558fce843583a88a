"""Whole-module differential check on any tree of Python sources (torch's own
package, a project's checkout): `depyf decompile TREE -o OUT` writes every
module's decompiled source, then each output is compiled and compared with
the module's own source compiled by the running interpreter.

    python -m tests.check_tree SRC_TREE [--out DIR] [--jobs N] [--json FILE]

Outcomes per module: identical (same bytecode after the normalization of
tests/roundtrip.py, recursively through every function and class), proven
(different bytecode that depyf._core.equivalent proves does the same),
refuted / unknown (the checker's other verdicts), uncompilable (the output
does not compile), failed (the batch named the module on stderr).  The
checker compares a body's nested functions and classes only by name and
signature, so each pair that differs is checked too; a state machine
(the fallback: exact by construction, but it imports builtins, which the
checker does not accept) makes its module "proven but state machines" when
everything else is proven.  Sources the running interpreter
cannot compile are skipped and counted.  The batch itself reports crashes and
hangs (each file runs in a supervised worker).
"""
import argparse
import collections
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import roundtrip  # noqa: E402  (beside this file)


def _compile(path, text):
    return compile(text, path, "exec", dont_inherit=True)


def _nested(code):
    """{(name, n): code} of the code objects among code's constants, the n-th
    of each name."""
    out, seen = {}, {}
    for c in code.co_consts:
        if hasattr(c, "co_code"):
            n = seen.get(c.co_name, 0)
            seen[c.co_name] = n + 1
            out[(c.co_name, n)] = c
    return out


# The worst verdict of a body's parts is the body's.
_RANK = {True: 0, "sm": 1, None: 2, False: 3}


def _is_state_machine(code):
    """The fallback's output: a loop over a __state variable (inside a class
    the compiler mangles it to _Cls__state)."""
    return any(n.endswith("__state") for n in code.co_varnames + code.co_names + code.co_cellvars)


def equivalent_tree(want, got, equivalent):
    """(verdict, why) for a module or class and everything nested in it: the
    checker compares a body's nested defs and classes by name and signature
    only (each is checked on its own), so every pair that differs is checked
    here too, recursively."""
    verdict, why = equivalent(want, got)
    if verdict is False and _is_state_machine(got):
        return "sm", why
    if verdict is not True:
        return verdict, why
    inner, other = _nested(want), _nested(got)
    if set(inner) != set(other):
        return False, "nested code objects differ: %r" % sorted(set(inner) ^ set(other))
    worst = (True, "")
    for key, code in inner.items():
        if roundtrip.compare_code(code, other[key]) is None:
            continue
        sub, why = equivalent_tree(code, other[key], equivalent)
        if _RANK[sub] > _RANK[worst[0]]:
            worst = (sub, "in %s: %s" % (key[0], why))
    return worst


def check_module(src_path, out_path, equivalent):
    """(outcome, detail) for one module."""
    try:
        with open(src_path, encoding="utf-8") as f:
            want = _compile(src_path, f.read())
    except (SyntaxError, ValueError, UnicodeDecodeError):
        return "skipped", "the source does not compile here"
    if not os.path.exists(out_path):
        return "failed", "no output written"
    with open(out_path, encoding="utf-8") as f:
        text = f.read()
    try:
        got = _compile(src_path, text)
    except (SyntaxError, ValueError) as exc:
        return "uncompilable", str(exc)
    diff = roundtrip.compare_code(want, got)
    if diff is None:
        return "identical", ""
    verdict, why = equivalent_tree(want, got, equivalent)
    outcome = {True: "proven", False: "refuted", None: "unknown", "sm": "proven but state machines"}[verdict]
    return outcome, "%s | %s" % (why, diff)


def run(src_tree, out_dir, jobs):
    cmd = [sys.executable, "-m", "depyf", "decompile", src_tree, "-o", out_dir, "--timeout", "120"]
    if jobs > 0:
        cmd += ["-j", str(jobs)]
    batch = subprocess.run(cmd, capture_output=True, text=True) if jobs >= 0 else None
    from depyf import _core
    counts, details = collections.Counter(), []
    for root, _dirs, files in os.walk(src_tree):
        for name in sorted(files):
            if not name.endswith(".py"):
                continue
            src = os.path.join(root, name)
            rel = os.path.relpath(src, src_tree)
            outcome, detail = check_module(src, os.path.join(out_dir, rel), _core.equivalent)
            counts[outcome] += 1
            if outcome != "identical":
                details.append({"module": rel, "outcome": outcome, "detail": detail[:600]})
    return batch, counts, details


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("tree", help="a directory of .py files")
    ap.add_argument("--out", help="where the decompiled tree goes (default: a temporary directory)")
    ap.add_argument("--jobs", type=int, default=0,
                    help="batch processes (default: one per core; -1: no batch, --out holds its outputs)")
    ap.add_argument("--json", help="write every non-identical module's outcome and first difference")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        batch, counts, details = run(args.tree, args.out or os.path.join(tmp, "out"), args.jobs)
    if batch is not None:
        print(batch.stdout.strip())
        for line in batch.stderr.splitlines():
            print("  batch: " + line)
    total = sum(n for k, n in counts.items() if k != "skipped")
    for outcome, n in sorted(counts.items(), key=lambda kv: -kv[1]):
        print("%-26s %6d  %5.1f%%" % (outcome, n, 100.0 * n / max(total, 1)))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(details, f, indent=1)
    wrong = counts["refuted"] + counts["uncompilable"] + counts["failed"]
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
