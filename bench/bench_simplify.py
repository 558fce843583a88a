"""CPU time of the simplifier of Dynamo's transformed code (depyf/_simplify.py), which runs
inside Dynamo's bytecode hook while the first compiled call waits, per function, against
the simplifier of another commit.

    python bench/bench_simplify.py [--workloads gpt,bert,resnet|all] [--backend aot_eager]
                                   [--baseline main] [--repeats 30]

The inputs are recorded when the program runs (tests/torch/simplify_inputs.py): each
workload of tests/torch/torch_workloads.py (by default the GPT-, BERT- and ResNet-shaped
models of bench_torch_compile.py; Dynamo's bytecode does not depend on the backend) runs
compiled under prepare_debug, every call of the simplifier recorded.  Each input is then
simplified --repeats times by this checkout's simplifier and by the baseline's (its modules
read with git), alternately; the median CPU time of one call is printed per function.
"simplify" is what the hook pays; "line map" is the first call of the line map, needed
only where Dynamo's own bytecode runs with its lines pointed at the simplified text.
Every simplified text and line map must be the same for both (exit 1 otherwise).
"""
import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tests", "torch"))
import simplify_inputs  # noqa: E402
import torch_workloads  # noqa: E402

from depyf import _simplify  # noqa: E402


def timed(simplifiers, given, repeats):
    """[(median CPU ms of a call, median CPU ms of the line map's first call)] per simplifier,
    their calls taken in turn."""
    resume, graphs = given["resume_params"], given["graph_params"]
    args = (given["source"], given["local_names"], given["params"], given["graph_outputs"],
            None if resume is None else resume.get, None if graphs is None else graphs.get)
    samples = [([], []) for _ in simplifiers]
    for _ in range(repeats):
        for simplify_mapped, (calls, maps) in zip(simplifiers, samples):
            started = time.process_time()
            result = simplify_mapped(*args)
            calls.append(time.process_time() - started)
            if result is not None:
                started = time.process_time()
                result[1](1)
                maps.append(time.process_time() - started)
    return [(1000 * statistics.median(calls), 1000 * statistics.median(maps) if maps else 0.0)
            for calls, maps in samples]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workloads", default="gpt,bert,resnet")
    parser.add_argument("--backend", default="aot_eager")
    parser.add_argument("--baseline", default="main", help="a commit of this checkout")
    parser.add_argument("--repeats", type=int, default=30)
    args = parser.parse_args(argv)
    names = sorted(torch_workloads.WORKLOADS) if args.workloads == "all" else args.workloads.split(",")
    baseline = simplify_inputs.simplifier_at(args.baseline)
    if baseline is None:
        parser.error("no git, or no commit %r here" % args.baseline)
    inputs = simplify_inputs.record(names, args.backend)
    print("simplifier CPU ms per function, median of %d calls: this checkout vs %s" % (args.repeats, args.baseline))
    print("%-22s %6s %9s %9s %7s %9s %9s  %s" % ("workload", "lines", "simplify", "baseline", "ratio",
                                                 "line map", "baseline", "output"))
    totals, differ = [0.0, 0.0], 0
    for name, given in inputs:
        same = simplify_inputs.replay(_simplify.simplify_mapped, given) == simplify_inputs.replay(baseline, given)
        differ += not same
        ours, theirs = timed((_simplify.simplify_mapped, baseline), given, args.repeats)
        totals[0] += ours[0]
        totals[1] += theirs[0]
        print("%-22s %6d %9.2f %9.2f %6.1fx %9.2f %9.2f  %s" % (
            name, given["source"].count("\n"), ours[0], theirs[0], theirs[0] / ours[0], ours[1], theirs[1],
            "same" if same else "DIFFERS"))
    print("all %d functions: %.2f ms vs %.2f ms (%.1fx); %d outputs differ" % (
        len(inputs), totals[0], totals[1], totals[1] / totals[0], differ))
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
