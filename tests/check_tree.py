"""Whole-module differential check on any tree of Python sources (torch's own
package, a project's checkout): `depyf decompile TREE -o OUT` writes every
module's decompiled source, then each output is compiled and compared with
the module's own source compiled by the running interpreter.

    python -m tests.check_tree SRC_TREE [--out DIR] [--jobs N] [--json FILE]

Outcomes per module: identical (same bytecode after the normalization of
tests/roundtrip.py, recursively through every function and class), proven
(different bytecode that depyf._core.equivalent proves does the same),
refuted / unknown (the checker's other verdicts), uncompilable (the output
does not compile), failed (the batch named the module on stderr); "sm"
marks outputs holding a state machine.  Sources the running interpreter
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

_STATE_MACHINE = "# depyf: "


def _compile(path, text):
    return compile(text, path, "exec", dont_inherit=True)


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
    verdict, why = equivalent(want, got)
    outcome = {True: "proven", False: "refuted", None: "unknown"}[verdict]
    if _STATE_MACHINE in text:
        outcome += "/sm"
    return outcome, "%s | %s" % (why, diff)


def run(src_tree, out_dir, jobs):
    cmd = [sys.executable, "-m", "depyf", "decompile", src_tree, "-o", out_dir, "--timeout", "120"]
    if jobs:
        cmd += ["-j", str(jobs)]
    batch = subprocess.run(cmd, capture_output=True, text=True)
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
    ap.add_argument("--jobs", type=int, default=0, help="batch processes (default: one per core)")
    ap.add_argument("--json", help="write every non-identical module's outcome and first difference")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        batch, counts, details = run(args.tree, args.out or os.path.join(tmp, "out"), args.jobs)
    print(batch.stdout.strip())
    for line in batch.stderr.splitlines():
        print("  batch: " + line)
    total = sum(n for k, n in counts.items() if k != "skipped")
    for outcome, n in sorted(counts.items(), key=lambda kv: -kv[1]):
        print("%-16s %6d  %5.1f%%" % (outcome, n, 100.0 * n / max(total, 1)))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(details, f, indent=1)
    wrong = counts["refuted"] + counts["uncompilable"] + counts["failed"]
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
