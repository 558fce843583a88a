"""What the simplifier of Dynamo's transformed code is given, recorded from real compiles,
and a simplifier of another commit to replay it through (bench/bench_simplify.py, and
test_simplify_unchanged.py).

An input is a dict of JSON values: the decompiled `source`, the code's `local_names` and
`params`, `graph_outputs`, and the answers of the two callbacks (`resume_params`,
`graph_params`: {global name: parameter names or None}) for every global the source
names, so that a replay needs neither torch nor the compiled program.
"""

import contextlib
import io
import os
import re
import subprocess
import sys
import tempfile
import types

import torch

import depyf
from depyf import _simplify

import torch_workloads as wl

# The simplifier's modules (they import one another, nothing else of depyf).
MODULES = ("_fold_uses", "_one_state", "_simplify")
_GLOBAL = re.compile(r"__(?:resume_at|compiled_fn)_\w+")


def _answers(callback, source):
    if callback is None:
        return None
    answers = {}
    for name in set(_GLOBAL.findall(source)):
        found = callback(name)
        answers[name] = None if found is None else list(found)
    return answers


def record(names, backend="eager"):
    """[(workload name, input)] of every simplifier call while the workloads `names` run
    compiled with `backend` under prepare_debug."""
    recorded, real = [], _simplify.simplify_mapped
    current = [None]

    def recording(source, local_names=(), params=(), graph_outputs=False, resume_params=None, graph_params=None):
        recorded.append((current[0], {
            "source": source, "local_names": list(local_names), "params": list(params),
            "graph_outputs": graph_outputs, "resume_params": _answers(resume_params, source),
            "graph_params": _answers(graph_params, source)}))
        return real(source, local_names, params, graph_outputs, resume_params, graph_params)

    _simplify.simplify_mapped = recording
    try:
        for name in names:
            current[0] = name
            torch._dynamo.reset()
            with tempfile.TemporaryDirectory() as dump_dir, contextlib.redirect_stderr(io.StringIO()):
                with depyf.prepare_debug(dump_dir):
                    wl.WORKLOADS[name](lambda fn: torch.compile(fn, backend=backend))
    finally:
        _simplify.simplify_mapped = real
    return recorded


def replay(simplify_mapped, given):
    """(text, [line_of(k) for every line k of the source and one past it]) or None."""
    resume, graphs = given["resume_params"], given["graph_params"]
    result = simplify_mapped(given["source"], given["local_names"], given["params"], given["graph_outputs"],
                             None if resume is None else resume.get, None if graphs is None else graphs.get)
    if result is None:
        return None
    text, line_of = result
    return text, [line_of(k) for k in range(given["source"].count("\n") + 2)]


def simplifier_at(commit):
    """The simplify_mapped of `commit` of this checkout (its modules read with git and loaded
    as a package of their own), or None when git or the commit is not at hand."""
    repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    package = "_depyf_simplifier_" + commit
    sources = {}
    for module in MODULES:
        try:
            sources[module] = subprocess.run(["git", "-C", repo, "show", "%s:depyf/%s.py" % (commit, module)],
                                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, check=True,
                                             universal_newlines=True).stdout
        except (OSError, subprocess.CalledProcessError):
            return None
    sys.modules[package] = types.ModuleType(package)
    sys.modules[package].__path__ = []
    for module in MODULES:  # (in an order where each module's imports come first)
        mod = types.ModuleType("%s.%s" % (package, module))
        mod.__file__ = "<%s:depyf/%s.py>" % (commit, module)
        sys.modules[mod.__name__] = mod
        setattr(sys.modules[package], module, mod)
        exec(compile(sources[module].replace("from depyf import", "from %s import" % package), mod.__file__,
                     "exec"), mod.__dict__)
    return sys.modules[package]._simplify.simplify_mapped
