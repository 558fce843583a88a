"""`depyf decompile TREE -o OUTDIR` on the running Python's whole stdlib, compiled.

The stdlib (without site-packages) is copied into a temporary directory and
compiled there with compileall (plain .pyc files, as `python -m compileall`
writes them; --optimized also writes the -O and -OO ones), the .py files are
removed, and the batch decompiles the tree on every core.  Prints the batch's
own summary, its wall time and CPU time, and the load average, which says how
much of the machine others were using.

    .venv/bin/python bench/bench_batch.py [--jobs N] [--optimized] [--repeat N]
"""

import argparse
import compileall
import os
import resource
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import time


def make_tree(tree, optimized):
    stdlib = sysconfig.get_paths()["stdlib"]
    shutil.copytree(stdlib, tree, ignore=shutil.ignore_patterns("site-packages", "__pycache__", "*.pyc"),
                    symlinks=True)
    levels = [0, 1, 2] if optimized else [0]
    compileall.compile_dir(tree, quiet=2, workers=0, optimize=levels if sys.version_info >= (3, 9) else 0)
    count = 0
    for root, _dirs, files in os.walk(tree):
        for name in files:
            if name.endswith(".pyc"):
                count += 1
            else:
                os.unlink(os.path.join(root, name))
    return count


def cpu_of_children():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", type=int, default=None, help="processes (default: one per core)")
    parser.add_argument("--optimized", action="store_true", help="also the -O and -OO .pyc files")
    parser.add_argument("--repeat", type=int, default=1, help="runs; the fastest is kept")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="depyf-bench-batch-") as tmp:
        tree = os.path.join(tmp, "stdlib")
        files = make_tree(tree, args.optimized)
        print("Python %d.%d stdlib: %d .pyc files, %.1f MB" % (
            sys.version_info[0], sys.version_info[1], files,
            sum(os.path.getsize(os.path.join(r, f)) for r, _d, fs in os.walk(tree) for f in fs) / 1e6))
        command = [sys.executable, "-m", "depyf", "decompile", tree, "-o", os.path.join(tmp, "out")]
        if args.jobs:
            command += ["--jobs", str(args.jobs)]
        best = None
        for _ in range(args.repeat):
            shutil.rmtree(os.path.join(tmp, "out"), ignore_errors=True)
            load = os.getloadavg()[0]
            cpu, wall = cpu_of_children(), time.perf_counter()
            result = subprocess.run(command, capture_output=True, text=True)
            wall, cpu = time.perf_counter() - wall, cpu_of_children() - cpu
            if best is None or wall < best[0]:
                best = (wall, cpu, load, result)
        wall, cpu, load, result = best
        print(result.stdout.rstrip())
        failed = result.stderr.splitlines()
        print("failed files (exit status %d): %d%s" % (result.returncode, len(failed),
                                                       "".join("\n  " + line for line in failed[:10])))
        print("wall time %.2f s, CPU time %.2f s (all processes), %d cores, load average before the run %.2f"
              % (wall, cpu, os.cpu_count(), load))


if __name__ == "__main__":
    main()
