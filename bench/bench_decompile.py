"""Decompilation speed and memory: our depyf against the original depyf
0.20.0, on every function of the round-trip corpus (tests/roundtrip.py), in
one run.  Each decompiler runs in a subprocess of its own, which loads the
corpus, decompiles every code object and reports time and peak RSS.

    python bench/bench_decompile.py [--repeat N] [--limit SECONDS] [--ours-only] [--no-validation]
    valgrind --tool=callgrind python bench/bench_decompile.py --once

--no-validation times our decompiler without its translation validation (the
check that recompiles each function); --ours-only skips the original, e.g. to
compare two builds of ours (PYTHONPATH naming a dev build's checkout).
--once decompiles every function once, without validation, in this
process, with no timing: under callgrind it counts the instructions of the
extension (`callgrind_annotate --inclusive=yes` on `core_decompile`), a
figure the machine's load does not change.

A failure of either decompiler counts as an attempt and its time counts.
The target is ours >= 100x faster.  Not a test: nothing here asserts.
"""
import argparse
import importlib.util
import json
import os
import resource
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROUNDTRIP = os.path.join(os.path.dirname(HERE), "tests", "roundtrip.py")
sys.path.insert(0, HERE)
import depyf020  # noqa: E402

RUN_TIMEOUT = 3600  # one whole side; a hang in our C core ends here


def _load_roundtrip():
    spec = importlib.util.spec_from_file_location("roundtrip", ROUNDTRIP)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def corpus():
    """Every function code object of the round-trip corpus, in order."""
    roundtrip = _load_roundtrip()
    codes = []
    for name in roundtrip.CORPUS:
        with open(roundtrip.module_path(name), encoding="utf-8") as f:
            source = f.read()
        module_code = compile(source, name, "exec", dont_inherit=True)
        defs = roundtrip.def_nodes(roundtrip.ast.parse(source))
        codes += [code for _, code in roundtrip.iter_functions(module_code, defs)]
    return codes


class TimeLimit(Exception):
    pass


def _on_alarm(signum, frame):
    raise TimeLimit()


def _peak_rss_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0  # KiB on Linux


def measure(repeat, limit, validation=True):
    """In the subprocess: decompile the corpus `repeat` times with the depyf
    this interpreter imports; the fastest pass counts."""
    sys.modules["torch"] = None  # the original imports torch if it can; its decompiler needs none
    from depyf import decompile
    if not validation:
        from depyf import _core

        def decompile(code):
            return _core.decompile(code, validate=False)

    codes = corpus()
    try:  # first call: lazy imports and caches stay out of the timing
        decompile(measure.__code__)
    except Exception:
        pass
    baseline = _peak_rss_mb()
    signal.signal(signal.SIGALRM, _on_alarm)
    best = None
    for _ in range(repeat):
        failed = timed_out = 0
        started = time.perf_counter()
        for code in codes:
            signal.setitimer(signal.ITIMER_REAL, limit)  # only a Python-level hang stops here
            try:
                decompile(code)
            except TimeLimit:
                timed_out += 1
            except Exception:
                failed += 1
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)
        elapsed = time.perf_counter() - started
        if best is None or elapsed < best["seconds"]:
            best = {"seconds": elapsed, "failed": failed, "timed_out": timed_out}
    best.update(count=len(codes), rss_baseline_mb=baseline, rss_peak_mb=_peak_rss_mb())
    return best


def run_side(python, env, repeat, limit, extra_args=(), validation=True):
    """Runs `measure` under `python`; its result dict, or {'error': ...}."""
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        cmd = [python] + list(extra_args) + [os.path.abspath(__file__), "--measure", out.name,
                                             "--repeat", str(repeat), "--limit", str(limit)]
        if not validation:
            cmd.append("--no-validation")
        try:
            proc = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                  universal_newlines=True, timeout=RUN_TIMEOUT)
        except subprocess.TimeoutExpired:
            return {"error": "no result after %ds (hung)" % RUN_TIMEOUT}
        if proc.returncode != 0:
            return {"error": "exit status %d:\n%s" % (proc.returncode, proc.stdout[-3000:])}
        with open(out.name) as f:
            return json.load(f)


def _ours_env():
    # The subprocess must import the same depyf as this process.
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(os.path.abspath(p) for p in sys.path)  # '' is the cwd
    return env


def format_report(ours, theirs):
    lines = ["%-16s %7s %7s %6s %9s %12s %10s %10s" % (
        "", "objects", "failed", "hung", "total", "per object", "peak RSS", "RSS growth")]
    for label, r in (("depyf (ours)", ours), ("depyf 0.20.0", theirs)):
        if r is None:
            continue
        if "error" in r:
            lines.append("%-16s %s" % (label, r["error"]))
            continue
        lines.append("%-16s %7d %7d %6d %8.2fs %9.3f ms %7.0f MB %7.0f MB" % (
            label, r["count"], r["failed"], r["timed_out"], r["seconds"],
            1000.0 * r["seconds"] / r["count"], r["rss_peak_mb"],
            r["rss_peak_mb"] - r["rss_baseline_mb"]))
    if theirs is not None and "error" not in ours and "error" not in theirs:
        ratio = theirs["seconds"] / ours["seconds"] if ours["seconds"] else float("inf")
        lines.append("speed ratio (0.20.0 time / ours): %.1fx (target >= 100x)" % ratio)
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=1, help="passes per side; the fastest counts")
    ap.add_argument("--limit", type=float, default=10.0,
                    help="seconds one decompile may take (Python-level hangs only)")
    ap.add_argument("--ours-only", action="store_true", help="skip the original depyf")
    ap.add_argument("--no-validation", action="store_true", help="ours without translation validation")
    ap.add_argument("--once", action="store_true",
                    help="decompile every function once in this process, ours without validation, untimed")
    ap.add_argument("--measure", metavar="OUT", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.once:
        from depyf import _core
        codes = corpus()
        failed = 0
        for code in codes:
            try:
                _core.decompile(code, validate=False)
            except Exception:
                failed += 1
        print("%d functions decompiled once, %d failed" % (len(codes), failed))
        return 0
    if args.measure:
        result = measure(args.repeat, args.limit, validation=not args.no_validation)
        with open(args.measure, "w") as f:
            json.dump(result, f)
        return 0
    print("Python %s; corpus: %d stdlib modules of tests/roundtrip.py" % (
        sys.version.split()[0], len(_load_roundtrip().CORPUS)))
    ours = run_side(sys.executable, _ours_env(), args.repeat, args.limit, validation=not args.no_validation)
    theirs = None
    if not args.ours_only:
        original = depyf020.ensure_venv()
        theirs = run_side(original, depyf020.isolated_env(), args.repeat, args.limit, ["-I"])
    print(format_report(ours, theirs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
