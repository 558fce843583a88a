"""First-call compile work of small models counted in instructions, not
seconds: plain torch.compile, under our prepare_debug, and under the original
depyf 0.20.0, on the models and backends of bench_torch_compile.py.

    python bench/bench_compile_instructions.py [--models gpt,bert,resnet]
                                               [--backends inductor,aot_eager]

On a shared 2-core machine the CPU time of one configuration swings by tens of
percent from process to process, far more than the 1% this overhead must stay
under.  Instructions do not swing: each variant runs once, in a fresh process
under valgrind's callgrind, instrumented only during the first call of the
compiled model (inside prepare_debug for ours and the original: the hooks
are installed before, the dump finished after), and the instructions its own
process executes then are counted.  The C++ compiler Inductor starts is
another process and is not counted (in any variant), so the ratios are of the
work done in Python's process.  One thread (OMP_NUM_THREADS=1, one Inductor
compile thread), PYTHONHASHSEED=0 and the same working folder for every run
keep the count the same from run to run (--check-repeat shows it).  Valgrind
runs no AVX-512 code, so Inductor's kernels are built for AVX2 and ATen runs
its AVX2 kernels, in every variant.

Exits 1 when our median first-call overhead over plain exceeds --max-overhead
(default 1%).  Needs valgrind and a C compiler (for the five-line library that
turns counting on and off, built into a temporary folder).  Slow: about 50
times the first call, a few minutes per variant; --jobs runs configurations
side by side (the counts do not depend on the machine's load).
"""
import argparse
import concurrent.futures
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_torch_compile import MODEL_SETUP, WORKLOADS, original_python, print_medians  # noqa: E402
import depyf020  # noqa: E402

# valgrind runs no AVX-512: Inductor's kernels are built for AVX2 (-march=x86-64-v3) and
# ATen picks its AVX2 kernels, in every variant
VALGRIND_ISA = {"ATEN_CPU_CAPABILITY": "avx2", "TORCHINDUCTOR_CPP_MARCH": "x86-64-v3"}

# Client requests of callgrind.h, called from the child through ctypes.
TOGGLE_C = r"""
#include <valgrind/callgrind.h>
void bench_start(void) { CALLGRIND_START_INSTRUMENTATION; CALLGRIND_ZERO_STATS; }
void bench_mark(const char *phase) { CALLGRIND_DUMP_STATS_AT(phase); }
void bench_stop(void) { CALLGRIND_STOP_INSTRUMENTATION; }
"""

# Runs in a fresh process under callgrind: argv as bench_torch_compile's child, then the library.
CHILD = MODEL_SETUP + r"""
import ctypes
lib = ctypes.CDLL(sys.argv[5])
def first_call():
    lib.bench_start()
    compiled(*args)
    lib.bench_mark(b"call")
    lib.bench_stop()
with grad:
    if variant == "plain":
        first_call()
    else:
        import depyf
        with depyf.prepare_debug(dump_dir):
            first_call()
print("BENCH done")
"""


def build_toggle(folder):
    source = os.path.join(folder, "toggle.c")
    library = os.path.join(folder, "libtoggle.so")
    with open(source, "w") as f:
        f.write(TOGGLE_C)
    subprocess.run([os.environ.get("CC", "cc"), "-O1", "-shared", "-fPIC", "-o", library, source], check=True)
    return library


def read_call_count(folder):
    """The instructions of the dump made at the end of the first call, None when there is none."""
    for path in glob.glob(os.path.join(folder, "callgrind.out.*")):
        with open(path) as f:
            text = f.read()
        trigger = re.search(r"^desc: Trigger: Client Request: (\w+)", text, re.M)
        totals = re.search(r"^(?:totals|summary): (\d+)", text, re.M)
        if trigger and totals and trigger.group(1) == "call":
            return int(totals.group(1))
    return None


def count(variant, python, backend, model, library, env=None):
    """The instructions of one run's first call.  Every run of a bench works in the same folder
    (next to the library), emptied first: the paths torch and depyf make are the same
    strings in every variant, and the folder is not on sys.path (PYTHONSAFEPATH)."""
    env = dict(env or depyf020.isolated_env(), PYTHONHASHSEED="0", PYTHONSAFEPATH="1", OMP_NUM_THREADS="1",
               TORCHINDUCTOR_COMPILE_THREADS="1", TORCHINDUCTOR_FX_GRAPH_CACHE="0",
               TORCHINDUCTOR_AUTOGRAD_CACHE="0", **VALGRIND_ISA)
    work = os.path.join(os.path.dirname(library), "work")
    shutil.rmtree(work, ignore_errors=True)
    os.mkdir(work)
    env["TORCHINDUCTOR_CACHE_DIR"] = os.path.join(work, "cache")
    # cwd outside the repo: the original must not import our package, nor we theirs.
    proc = subprocess.run(
        ["valgrind", "--tool=callgrind", "--instr-atstart=no", "--callgrind-out-file=callgrind.out.%p",
         python, "-c", CHILD % {"workloads": WORKLOADS}, variant, backend, model,
         os.path.join(work, "dump"), library],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, env=env, cwd=work,
        timeout=7200)
    instructions = read_call_count(work)
    if proc.returncode != 0 or "BENCH done" not in proc.stdout or instructions is None:
        raise RuntimeError("%s %s %s failed:\n%s" % (variant, model, backend, proc.stderr[-3000:]))
    return instructions


def pct(ratio):
    return "%+.2f%%" % (100 * (ratio - 1))


def measure_config(config, pythons, check_repeat):
    """{variant: instructions of its first call} for one (model, backend); the repeats' lines."""
    model, backend = config
    counts, lines = {}, []
    with tempfile.TemporaryDirectory() as folder:
        library = build_toggle(folder)
        for variant, python in pythons.items():
            runs = [count(variant, python, backend, model, library) for _ in range(1 + check_repeat)]
            counts[variant] = runs[0]
            if check_repeat:
                lines.append("%-16s %-9s repeat: %d vs %d (%s)" % (
                    "%s/%s" % (model, backend), variant, runs[0], runs[1], pct(runs[1] / runs[0])))
    return counts, lines


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", default="gpt,bert,resnet")
    parser.add_argument("--backends", default="inductor,aot_eager")
    parser.add_argument("--max-overhead", type=float, default=0.01)
    parser.add_argument("--original-python", help="an interpreter with depyf 0.20.0 and torch")
    parser.add_argument("--skip-original", action="store_true")
    parser.add_argument("--check-repeat", action="store_true", help="count each variant twice, print both")
    parser.add_argument("--jobs", type=int, default=1, help="configurations measured at once")
    args = parser.parse_args(argv)
    sys.stdout.reconfigure(line_buffering=True)

    pythons = {"plain": sys.executable, "ours": sys.executable}
    if not args.skip_original:
        pythons["original"] = args.original_python or original_python()
    configs = [(m, b) for b in args.backends.split(",") for m in args.models.split(",")]
    ratios = {"ours": [], "original": [], "ours/original": []}
    print("first compiled call, millions of instructions in Python's process (callgrind)")
    print("%-16s %-9s %10s   %s" % ("model/backend", "variant", "call", "vs plain"))
    with concurrent.futures.ThreadPoolExecutor(max(1, args.jobs)) as pool:
        results = pool.map(lambda config: measure_config(config, pythons, args.check_repeat), configs)
        for (model, backend), (counts, lines) in zip(configs, results):
            for line in lines:
                print(line)
            plain = counts["plain"]
            for variant, c in counts.items():
                print("%-16s %-9s %10.1f   %s" % ("%s/%s" % (model, backend), variant, c / 1e6, pct(c / plain)))
            for variant in [v for v in ("ours", "original") if v in counts]:
                ratios[variant].append(counts[variant] / plain)
            if "original" in counts:
                ratios["ours/original"].append(counts["ours"] / counts["original"])
    ok = print_medians(ratios, len(configs), args.backends, args.max_overhead, "first-call instructions", pct)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
