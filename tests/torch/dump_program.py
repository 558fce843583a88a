"""A program that compiles a workload under prepare_debug, for the tests that run
several processes on one dump directory (test_shared_dump_dir.py).

    python dump_program.py DUMP_DIR WORKLOAD [BARRIER_DIR COUNT]
    python dump_program.py DUMP_DIR WORKLOAD --children N   (N multiprocessing children, one after another)

With a barrier, the process stays inside prepare_debug until COUNT processes
have reached it (so that they all overlap); it gives up after 10 minutes.
"""
import multiprocessing
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def run(dump_dir, workload, barrier=None, count=0):
    import torch

    import depyf
    import torch_workloads as wl

    with depyf.prepare_debug(dump_dir):
        wl.WORKLOADS[workload](lambda fn: torch.compile(fn, backend="eager"))
        if barrier:
            open(os.path.join(barrier, str(os.getpid())), "w").close()
            deadline = time.monotonic() + 600
            while len(os.listdir(barrier)) < count:
                if time.monotonic() > deadline:
                    sys.exit("the other processes never reached the barrier")
                time.sleep(0.05)


def main(argv):
    dump_dir, workload = argv[:2]
    if argv[2:3] == ["--children"]:
        context = multiprocessing.get_context("spawn")
        for _ in range(int(argv[3])):  # one after another: the first has ended when the last starts
            child = context.Process(target=run, args=(dump_dir, workload))
            child.start()
            child.join()
            if child.exitcode != 0:
                sys.exit("a child failed")
    else:
        run(dump_dir, workload, *(argv[2:3] + [int(c) for c in argv[3:4]]))


if __name__ == "__main__":
    main(sys.argv[1:])
