#!/usr/bin/env bash
# Installs depyf and torch 2.13.0 (CPU) into .venv (Python 3.11, created or
# updated here), runs examples/toy_example.py, which compiles the toy function
# under depyf.prepare_debug("./dump_src_dir"), and says where the dump is.
set -euo pipefail
cd "$(dirname "$0")/.."
. tools/venv.sh

make_venv .venv
# torch==2.13.0 is the CPU build only here: this machine's pip finds
# torch-2.13.0+cpu in a local folder.  Elsewhere PyPI gives the CUDA build
# (several GB); for the CPU one, set PIP_EXTRA_INDEX_URL to PyTorch's CPU
# wheel index, https://download.pytorch.org/whl/cpu (README, Set up).
.venv/bin/python -m pip install -q . torch==2.13.0
# Import the installed depyf, not the source tree's ./depyf (no extension there).
PYTHONSAFEPATH=1 .venv/bin/python examples/toy_example.py
echo "depyf dumped the torch.compile artifacts of the toy example into $(pwd)/dump_src_dir"
ls dump_src_dir
