"""First-call compile time of small models: plain torch.compile, under our
prepare_debug, and under the original depyf 0.20.0 (in a venv of its own), in one run.

    python bench/bench_torch_compile.py [--repeats 5] [--models gpt,bert,resnet]
                                        [--backends inductor,aot_eager] [--original-python PY]

Models (tests/torch/torch_workloads.py): a GPT-style decoder (3 blocks), a
BERT-shaped encoder with a padding mask (eval, no grad), a ResNet-shaped CNN
(training mode).  Every measurement runs in a fresh process and records the CPU
time (the verdict: on a shared machine wall time mostly measures the
neighbours) of three parts: entering prepare_debug (hooks installed), the first
call of the compiled model (Dynamo + AOTAutograd + backend compile: "compile"),
and leaving the block (the dump finished, the report written: "exit"); for
ours also the CPU time spent inside depyf's hooks during the first call
("hooks": every hook runs through _torch_internals._call_safely), the share of
the overhead that the machine's load does not blur; and in every variant the
CPU time of the garbage collector's full collections during the first call
("full gc": one more of them, about 0.2 s, can fall into a call when objects
made before it, by depyf or anyone, bring the next one forward).
Variants run interleaved in a rotating order, after one warm-up of the
configuration (the C++ kernel cache stays warm); AOTAutograd's and Inductor's
graph caches are off in every variant (depyf turns them off to see every stage,
so plain compiles in full too).  Per configuration it prints the medians and
the ratios of ours and of the original against plain, and ours against the
original; then the median of each ratio over the configurations.  Exits 1 when
our median compile overhead over plain exceeds --max-overhead (default 1%).

The original depyf is installed with pip, with this interpreter's torch version,
into bench/.venv-depyf020-torch on first use (see bench/depyf020.py for the one
without torch), or --original-python names an interpreter that has both.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import depyf020  # noqa: E402

WORKLOADS = os.path.join(os.path.dirname(HERE), "tests", "torch")
VENV = os.path.join(HERE, ".venv-depyf020-torch")

# The model of a fresh process, argv = variant, backend, model, dump dir: `compiled`,
# its `args` and the `grad` mode to call it in (bench_gc.py uses it too).
MODEL_SETUP = r"""
import sys
sys.path.insert(0, %(workloads)r)
import torch
import torch_workloads as wl
variant, backend, name, dump_dir = sys.argv[1:5]
torch.manual_seed(0)
if name == "gpt":
    model, args = wl.TinyGPT(layers=3), (torch.randint(0, 64, (2, 16)),)
elif name == "bert":
    mask = torch.ones(2, 10, dtype=torch.bool)
    mask[1, 7:] = False
    model, args = wl.TinyBert().eval(), (torch.randint(0, 50, (2, 10)), torch.randint(0, 2, (2, 10)), mask)
else:
    model, args = wl.TinyResNet(), (torch.randn(4, 3, 8, 8),)
compiled = torch.compile(model, backend=backend)
grad = torch.no_grad() if name == "bert" else torch.enable_grad()
"""

# Runs in a fresh process (argv as above).
CHILD = MODEL_SETUP + r"""
import json, time
clock = time.process_time
marks = {}
import gc
full_gc, gc_started = [0.0], [0.0]
def gc_timer(phase, info):  # CPU time of full collections (generation 2) in the first call
    if info["generation"] == 2:
        if phase == "start":
            gc_started[0] = clock()
        elif marks.get("entered") is not None and marks.get("called") is None:
            full_gc[0] += clock() - gc_started[0]
gc.callbacks.append(gc_timer)
with grad:
    if variant == "plain":
        marks["start"] = marks["entered"] = clock()
        compiled(*args)
        marks["called"] = marks["left"] = clock()
    else:
        import depyf
        if variant == "ours":  # CPU time inside our hooks (every one runs through _call_safely)
            from depyf import _torch_internals as _ti
            inner, spent, depth = _ti._call_safely, [0.0], [0]
            def timed(what, callback, *a):
                depth[0] += 1
                started = clock()
                try:
                    return inner(what, callback, *a)
                finally:
                    depth[0] -= 1
                    if not depth[0]:
                        spent[0] += clock() - started
            _ti._call_safely = _ti.outside_dynamo(timed)
        marks["start"] = clock()
        with depyf.prepare_debug(dump_dir):
            marks["entered"] = clock()
            compiled(*args)
            marks["called"] = clock()
            marks["hooks"] = spent[0] if variant == "ours" else 0.0
        marks["left"] = clock()
print("BENCH " + json.dumps({"enter": marks["entered"] - marks["start"], "compile": marks["called"] - marks["entered"],
                             "exit": marks["left"] - marks["called"], "hooks": marks.get("hooks", 0.0),
                             "full_gc": full_gc[0],
                             "depyf": getattr(sys.modules.get("depyf"), "__file__", None)}))
"""


def original_python():
    """An interpreter with depyf 0.20.0 and this interpreter's torch (made on first use)."""
    import torch

    python = os.path.join(VENV, "bin", "python")
    if not os.path.exists(python):
        subprocess.run([sys.executable, "-m", "venv", VENV], check=True)
    probe = "import importlib.metadata as m; print(m.version('depyf'), m.version('torch'))"
    result = subprocess.run([python, "-I", "-c", probe], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                            universal_newlines=True, env=depyf020.isolated_env())
    wanted = torch.__version__.split("+")[0]
    if result.returncode != 0 or result.stdout.split() != [depyf020.VERSION, torch.__version__]:
        subprocess.run([python, "-m", "pip", "install", "-q", "depyf==" + depyf020.VERSION, "torch==" + wanted],
                       check=True, env=depyf020.isolated_env())
    return python


def measure(variant, python, backend, model, cache_dir):
    env = dict(depyf020.isolated_env(), TORCHINDUCTOR_CACHE_DIR=cache_dir, TORCHINDUCTOR_FX_GRAPH_CACHE="0",
               TORCHINDUCTOR_AUTOGRAD_CACHE="0")
    with tempfile.TemporaryDirectory() as work:
        # cwd outside the repo: the original must not import our package, nor we theirs.
        proc = subprocess.run(
            [python, "-c", CHILD % {"workloads": WORKLOADS}, variant, backend, model, os.path.join(work, "dump")],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, env=env, cwd=work,
            timeout=1800)
    lines = [line for line in proc.stdout.splitlines() if line.startswith("BENCH ")]
    if proc.returncode != 0 or not lines:
        raise RuntimeError("%s %s %s failed:\n%s" % (variant, model, backend, proc.stderr[-3000:]))
    return json.loads(lines[-1][len("BENCH "):])


def pct(ratio):
    return "%+.1f%%" % (100 * (ratio - 1))


def print_medians(ratios, nconfigs, backends, max_overhead, measure, pct=pct):
    """Prints the median of each ratio over the configurations and the verdict on ours:
    True when its median overhead over plain is within max_overhead."""
    print("\nmedian over %d configurations (GPT-, BERT-, ResNet-shaped x %s):" % (nconfigs, backends))
    for name, values in ratios.items():
        if values:
            print("  %-15s %s   (each: %s)" % (name, pct(statistics.median(values)),
                                             ", ".join(pct(v) for v in values)))
    ok = statistics.median(ratios["ours"]) - 1 <= max_overhead
    print("ours: %s %s over plain (limit %s) -> %s" % (
        pct(statistics.median(ratios["ours"])), measure, pct(1 + max_overhead), "OK" if ok else "FAIL"))
    return ok


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--models", default="gpt,bert,resnet")
    parser.add_argument("--backends", default="inductor,aot_eager")
    parser.add_argument("--max-overhead", type=float, default=0.01)
    parser.add_argument("--original-python", help="an interpreter with depyf 0.20.0 and torch")
    parser.add_argument("--skip-original", action="store_true")
    args = parser.parse_args(argv)
    sys.stdout.reconfigure(line_buffering=True)  # (each configuration's lines as soon as they are measured)

    pythons = {"plain": sys.executable, "ours": sys.executable}
    if not args.skip_original:
        pythons["original"] = args.original_python or original_python()
    configs = [(m, b) for b in args.backends.split(",") for m in args.models.split(",")]
    ratios = {"ours": [], "original": [], "ours/original": [], "ours block": [], "original block": [],
              "ours hooks": []}
    print("first compiled call, median CPU seconds of %d fresh processes per variant" % args.repeats)
    print("%-16s %-9s %8s %8s %8s %8s %8s   %s" % ("model/backend", "variant", "enter", "compile", "exit", "hooks",
                                                     "full gc", "compile vs plain"))
    with tempfile.TemporaryDirectory() as cache_dir:
        for model, backend in configs:
            measure("plain", sys.executable, backend, model, cache_dir)  # warm the C++ kernel cache
            samples = {variant: [] for variant in pythons}
            order = list(pythons)
            for round_ in range(args.repeats):
                for variant in order[round_ % len(order):] + order[:round_ % len(order)]:
                    samples[variant].append(measure(variant, pythons[variant], backend, model, cache_dir))
            median = {v: {part: statistics.median(s[part] for s in runs) for part in ("enter", "compile", "exit")}
                      for v, runs in samples.items()}
            full_gc = {v: statistics.median(s.get("full_gc", 0.0) for s in runs) for v, runs in samples.items()}
            hooks = statistics.median(s["hooks"] for s in samples["ours"])
            plain = median["plain"]["compile"]
            for variant, m in median.items():
                print("%-16s %-9s %8.2f %8.2f %8.2f %8s %8.3f   %s" % (
                    "%s/%s" % (model, backend), variant, m["enter"], m["compile"], m["exit"],
                    "%.3f" % hooks if variant == "ours" else "", full_gc[variant], pct(m["compile"] / plain)))
            ratios["ours hooks"].append(1 + hooks / median["ours"]["compile"])
            for variant in [v for v in ("ours", "original") if v in median]:
                ratios[variant].append(median[variant]["compile"] / plain)
                ratios[variant + " block"].append(sum(median[variant].values()) / plain)
            if "original" in median:
                ratios["ours/original"].append(median["ours"]["compile"] / median["original"]["compile"])
    ok = print_medians(ratios, len(configs), args.backends, args.max_overhead, "compile CPU time")
    print("(\"block\": entering + first call + leaving prepare_debug, over plain's first call; \"hooks\": CPU time"
          " inside our hooks during the first call, its share of ours' first call: the part of our overhead"
          " the machine's load does not blur; \"full gc\": CPU time of the garbage collector's full"
          " collections during the first call, which come when enough objects have survived, so one more"
          " or one less can fall into the call)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
