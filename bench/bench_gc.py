"""The garbage collector during the first compiled call: plain torch.compile and
under our prepare_debug, on the models of bench_torch_compile.py.

    python bench/bench_gc.py [--models gpt,bert,resnet] [--backends inductor,aot_eager]

CPython runs a full collection when the objects promoted into the oldest
generation since the last one exceed a quarter of those it holds.  One more
full collection (about 0.2 s on these models) falls into a first call when
the objects promoted before and during it cross that line earlier: this
prints, per variant, the full collections during the call and the objects
promoted into the oldest generation (what CPython counts), which, unlike
times, do not depend on the machine's load.  Each variant runs in a fresh
process; counting walks the oldest generation at every collection of the
middle one, so the call is slow here: no time is printed.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_torch_compile import MODEL_SETUP, WORKLOADS  # noqa: E402

# Runs in a fresh process (argv as bench_torch_compile's child).
CHILD = MODEL_SETUP + r"""
import gc, json
counts = {"full": 0, "promoted": 0}
inside, before = [False], [0]
def count(phase, info):
    generation = info["generation"]
    if not inside[0] or generation == 0:
        return
    if phase == "start":
        before[0] = len(gc.get_objects(2))
    elif generation == 1:
        counts["promoted"] += len(gc.get_objects(2)) - before[0]
    else:
        counts["full"] += 1
gc.callbacks.append(count)
with grad:
    if variant == "plain":
        inside[0] = True
        compiled(*args)
        inside[0] = False
    else:
        import depyf
        with depyf.prepare_debug(dump_dir):
            inside[0] = True
            compiled(*args)
            inside[0] = False
print("BENCH " + json.dumps(counts))
"""


def run(variant, backend, model):
    with tempfile.TemporaryDirectory() as work:
        env = dict(os.environ, TORCHINDUCTOR_CACHE_DIR=os.path.join(work, "cache"),
                   TORCHINDUCTOR_FX_GRAPH_CACHE="0", TORCHINDUCTOR_AUTOGRAD_CACHE="0")
        proc = subprocess.run([sys.executable, "-c", CHILD % {"workloads": WORKLOADS}, variant, backend, model,
                               os.path.join(work, "dump")], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              universal_newlines=True, env=env, cwd=work)
    for line in proc.stdout.splitlines():
        if line.startswith("BENCH "):
            return json.loads(line[6:])
    raise SystemExit("%s %s/%s failed:\n%s" % (variant, model, backend, proc.stderr[-2000:]))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", default="gpt,bert,resnet")
    ap.add_argument("--backends", default="inductor,aot_eager")
    args = ap.parse_args(argv)
    print("first compiled call: full collections / objects promoted into the oldest generation")
    print("%-18s %14s %14s %10s" % ("model/backend", "plain", "ours", "promoted"))
    for backend in args.backends.split(","):
        for model in args.models.split(","):
            plain, ours = run("plain", backend, model), run("ours", backend, model)
            print("%-18s %3d / %8d %3d / %8d %+9.1f%%" % (
                "%s/%s" % (model, backend), plain["full"], plain["promoted"], ours["full"], ours["promoted"],
                100.0 * (ours["promoted"] - plain["promoted"]) / max(1, plain["promoted"])))
    return 0


if __name__ == "__main__":
    sys.exit(main())
