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
and leaving the block (the dump finished, the report written: "exit").
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

# Runs in a fresh process: argv = variant, backend, model, dump dir.
CHILD = r"""
import json, sys, time
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
clock = time.process_time
marks = {}
with grad:
    if variant == "plain":
        marks["start"] = marks["entered"] = clock()
        compiled(*args)
        marks["called"] = marks["left"] = clock()
    else:
        import depyf
        marks["start"] = clock()
        with depyf.prepare_debug(dump_dir):
            marks["entered"] = clock()
            compiled(*args)
            marks["called"] = clock()
        marks["left"] = clock()
print("BENCH " + json.dumps({"enter": marks["entered"] - marks["start"], "compile": marks["called"] - marks["entered"],
                             "exit": marks["left"] - marks["called"], "depyf": getattr(sys.modules.get("depyf"), "__file__", None)}))
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
    ratios = {"ours": [], "original": [], "ours/original": [], "ours block": [], "original block": []}
    print("first compiled call, median CPU seconds of %d fresh processes per variant" % args.repeats)
    print("%-16s %-9s %8s %8s %8s   %s" % ("model/backend", "variant", "enter", "compile", "exit", "compile vs plain"))
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
            plain = median["plain"]["compile"]
            for variant, m in median.items():
                print("%-16s %-9s %8.2f %8.2f %8.2f   %s" % ("%s/%s" % (model, backend), variant, m["enter"],
                                                            m["compile"], m["exit"], pct(m["compile"] / plain)))
            for variant in [v for v in ("ours", "original") if v in median]:
                ratios[variant].append(median[variant]["compile"] / plain)
                ratios[variant + " block"].append(sum(median[variant].values()) / plain)
            if "original" in median:
                ratios["ours/original"].append(median["ours"]["compile"] / median["original"]["compile"])
    print("\nmedian over %d configurations (GPT-, BERT-, ResNet-shaped x %s):" % (len(configs), args.backends))
    for name, values in ratios.items():
        if values:
            print("  %-15s %s   (each: %s)" % (name, pct(statistics.median(values)),
                                             ", ".join(pct(v) for v in values)))
    ok = statistics.median(ratios["ours"]) - 1 <= args.max_overhead
    print("ours: %s compile CPU time over plain (limit %s) -> %s" % (
        pct(statistics.median(ratios["ours"])), pct(1 + args.max_overhead), "OK" if ok else "FAIL"))
    print("(\"block\": entering + first call + leaving prepare_debug, over plain's first call)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
