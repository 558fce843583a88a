"""How many of Dynamo's transformed code objects depyf prints structured.

    PYTHONSAFEPATH=1 .venv/bin/python tools/dynamo_validated.py

Runs every workload of tests/torch/torch_workloads.py (`run_*`) under
`depyf.prepare_debug` with the eager backend, then reads each dumped
`__transformed_code_*.py`: a file that starts its function with a
`# depyf:` note is the state machine (no structured form, or the structured
form failed translation validation), one that starts `# depyf could not
decompile` holds the disassembly of code that failed; the others were
structured and validated.  Prints each reason and the counts.
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
    total = machines = failed = 0
    for name in sorted(n for n in dir(torch_workloads) if n.startswith("run_")):
        torch._dynamo.reset()
        dump = tempfile.mkdtemp(prefix="depyf-dynamo-")
        with depyf.prepare_debug(dump):
            getattr(torch_workloads, name)(lambda f: torch.compile(f, backend="eager"))
        for path in sorted(glob.glob(os.path.join(dump, "__transformed_code_*.py"))):
            total += 1
            with open(path) as f:
                text = f.read()
            note = re.search(r"# depyf: (.*)", text)
            error = re.search(r"# Reason: (.*)", text) if text.startswith("# depyf could not decompile") else None
            machines += note is not None
            failed += error is not None
            if note or error:
                print("%s %s: %s" % (name, os.path.basename(path), (note or error).group(1)))
    print("transformed code objects: %d, structured and validated: %d, state machines: %d, not decompiled: %d"
          % (total, total - machines - failed, machines, failed))


if __name__ == "__main__":
    main()
