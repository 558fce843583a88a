"""How many of Dynamo's transformed code objects depyf prints structured.

    PYTHONSAFEPATH=1 .venv/bin/python tools/dynamo_validated.py

Runs every workload of tests/torch/torch_workloads.py (`run_*`) under
`depyf.prepare_debug` with the eager backend, then reads each dumped
`__transformed_code_*.py`: a file that starts its function with a
`# depyf:` note is the state machine (no structured form, or the structured
form failed translation validation); the others were structured and
validated.  Prints each state machine's reason and the count.
"""
import glob
import os
import re
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "tests", "torch"))

import torch  # noqa: E402

import depyf  # noqa: E402
import torch_workloads  # noqa: E402


def main():
    total = machines = 0
    for name in sorted(n for n in dir(torch_workloads) if n.startswith("run_")):
        torch._dynamo.reset()
        dump = tempfile.mkdtemp(prefix="depyf-dynamo-")
        with depyf.prepare_debug(dump):
            getattr(torch_workloads, name)(lambda f: torch.compile(f, backend="eager"))
        for path in sorted(glob.glob(os.path.join(dump, "__transformed_code_*.py"))):
            total += 1
            with open(path) as f:
                note = re.search(r"# depyf: (.*)", f.read())
            if note:
                machines += 1
                print("%s %s: %s" % (name, os.path.basename(path), note.group(1)))
    print("transformed code objects: %d, structured and validated: %d, state machines: %d"
          % (total, total - machines, machines))


if __name__ == "__main__":
    main()
