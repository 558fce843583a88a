"""The examples of the original depyf's README and blog posts run unchanged.

Each program below is copied from those texts (shared/seeds), runs in its own
process from a fresh directory, and must leave the files the texts describe.
"""
import os
import re
import subprocess
import sys

import pytest

pytest.importorskip("torch")

import depyf  # noqa: E402

pytestmark = pytest.mark.torch

# Subprocesses import the depyf this test imported (the installed one under
# tools/test.sh, the checkout's in a developer build).
DEPYF_HOME = os.path.dirname(os.path.dirname(os.path.abspath(depyf.__file__)))

README_EXAMPLE = '''
import torch
from torch import _dynamo as torchdynamo
from typing import List

@torch.compile
def toy_example(a, b):
    x = a / (torch.abs(a) + 1)
    if b.sum() < 0:
        b = b * -1
    return x * b

def main():
    for _ in range(100):
        toy_example(torch.randn(10), torch.randn(10))

if __name__ == "__main__":
    import depyf
    with depyf.prepare_debug("./dump_src_dir"):
        main()
    # surround the code you want to debug inside `with depyf.debug()`
    with depyf.debug():
        main()
'''

FUNCTION_FORM_EXAMPLE = '''
import torch

@torch.compile(backend="inductor")
def toy_example(a, b):
    x = a / (torch.abs(a) + 1)
    if b.sum() < 0:
        b = b * -1
    return x * b

import depyf
with depyf.prepare_debug(toy_example, "./dump_src_debug_function_aot"):
    for _ in range(100):
        toy_example(torch.randn(10, requires_grad=True), torch.randn(10, requires_grad=True))
        toy_example(torch.randn(8, requires_grad=True), torch.randn(8, requires_grad=True))

with depyf.debug():
    toy_example(torch.randn(10, requires_grad=True), torch.randn(10, requires_grad=True))
'''

EXPLAIN_EXAMPLE = '''
import torch
@torch.compile(backend="eager")
def toy_example(a, b):
    x = a / (torch.abs(a) + 1)
    if b.sum() < 0:
        b = b * -1
    return x * b

for _ in range(100):
    toy_example(torch.randn(10), torch.randn(10))

from depyf.explain import dump_src
src = dump_src(toy_example)
with open("explained_code.py", "w") as f:
    f.write(src)
'''

INSTALL_EXAMPLE = '''
import depyf
depyf.install()
from typing import List
import torch
from torch import _dynamo as torchdynamo
def my_compiler(gm: torch.fx.GraphModule, example_inputs: List[torch.Tensor]):
    print("my_compiler() called with FX graph:")
    gm.graph.print_tabular()
    return gm.forward  # return a python callable

@torchdynamo.optimize(my_compiler)
def toy_example(a, b):
    x = a / (torch.abs(a) + 1)
    if b.sum() < 0:
        b = b * -1
    return x * b
for _ in range(100):
    toy_example(torch.randn(10), torch.randn(10))
'''


# The first example of the README (shared/seeds/000): prepare_debug alone.
README_FIRST_EXAMPLE = '''
import torch
from torch import _dynamo as torchdynamo
from typing import List

@torch.compile
def toy_example(a, b):
    x = a / (torch.abs(a) + 1)
    if b.sum() < 0:
        b = b * -1
    return x * b

def main():
    for _ in range(100):
        toy_example(torch.randn(10), torch.randn(10))

if __name__ == "__main__":
    # main()
    # surround the code you want to run inside `with depyf.prepare_debug`
    import depyf
    with depyf.prepare_debug("./dump_src_dir"):
        main()
'''

# The blog post's test.py (shared/seeds/001), indented by 3 as there.
BLOG_EXAMPLE = '''
# test.py
import torch
from torch import _dynamo as torchdynamo
from typing import List

@torch.compile
def toy_example(a, b):
   x = a / (torch.abs(a) + 1)
   if b.sum() < 0:
       b = b * -1
   return x * b

def main():
   for _ in range(100):
       toy_example(torch.randn(10), torch.randn(10))

if __name__ == "__main__":
   import depyf
   with depyf.prepare_debug("depyf_debug_dir"):
       main()
   with depyf.debug():
       main()
'''

# The older README's debugger example (shared/seeds/003), its diff applied.
DEBUGGER_EXAMPLE = '''
import torch
from torch import _dynamo as torchdynamo
from typing import List

@torch.compile(backend="eager")
def toy_example(a, b):
    x = a / (torch.abs(a) + 1)
    if b.sum() < 0:
        b = b * -1
    return x * b

import depyf
with depyf.prepare_debug(toy_example, "./dump_src_dir"):
    # run your code long enough under `depyf.prepare_debug` to prepare all the source code for debugging
    for _ in range(100):
        toy_example(torch.randn(10), torch.randn(10))
# the program will pause here for you to set breakpoints
with depyf.debug():
    # then you can hit breakpoints when running the function
    toy_example(torch.randn(10), torch.randn(10))
'''

# The older README's "General Usage" (shared/seeds/003).
GENERAL_USAGE_EXAMPLE = '''
# obtain a callable object or codeobject
def func():
    print("hello, world!")
# import the `decompile` function
from depyf import decompile
# and decompile it into source code!
print(decompile(func))
'''


def run_example(tmp_path, source, stdin_text=None, **env_vars):
    """Run `source` as a script in `tmp_path`; stdin is /dev/null, or a pipe holding `stdin_text`."""
    (tmp_path / "example.py").write_text(source)
    env = dict(os.environ, PYTHONPATH=DEPYF_HOME + os.pathsep + os.environ.get("PYTHONPATH", ""), **env_vars)
    env.pop("PYTHONBREAKPOINT", None)
    stdin = {"stdin": subprocess.DEVNULL} if stdin_text is None else {"input": stdin_text}
    proc = subprocess.run([sys.executable, "example.py"], cwd=str(tmp_path), capture_output=True, text=True,
                          timeout=900, env=env, **stdin)
    assert proc.returncode == 0, proc.stderr[-4000:]
    return proc


def test_readme_example_with_debug(tmp_path):
    run_example(tmp_path, README_EXAMPLE)
    names = os.listdir(tmp_path / "dump_src_dir")
    for expected in ("full_code_for_toy_example_0.py", "__transformed_code_0_for_toy_example.py",
                     "__compiled_fn_1.Captured_Graph.0.py", "__compiled_fn_1.kernel_0.py"):
        assert expected in names, sorted(names)
    # Dynamo's code of the seed example is printed structured, each function
    # checked against Dynamo's bytecode (never the state machine)
    transformed = [n for n in names if n.startswith("__transformed_code_")]
    assert len(transformed) >= 2, sorted(names)
    for name in transformed:
        text = (tmp_path / "dump_src_dir" / name).read_text()
        assert "depyf: the structured form failed validation" not in text, text
        assert "depyf: no structured form was found" not in text, text
        compile(text, name, "exec")


def test_function_first_form_with_grad_and_two_sizes(tmp_path):
    run_example(tmp_path, FUNCTION_FORM_EXAMPLE)
    names = os.listdir(tmp_path / "dump_src_debug_function_aot")
    assert "full_code_for_toy_example_0.py" in names
    for stage in ("Joint_graph", "Forward_graph", "Backward_graph", "AFTER_POST_GRAD"):
        assert "__compiled_fn_1.%s.0.py" % stage in names, sorted(names)


def test_explain_example_writes_the_explained_code(tmp_path):
    run_example(tmp_path, EXPLAIN_EXAMPLE)
    text = (tmp_path / "explained_code.py").read_text()
    compile(text, "explained_code.py", "exec")
    assert "def transformed_toy_example(a, b):" in text


def test_install_example_logs_the_decompiled_source(tmp_path):
    pytest.importorskip("tabulate")  # the example's print_tabular() needs it, with or without depyf
    proc = run_example(tmp_path, INSTALL_EXAMPLE, TORCH_LOGS="+bytecode")
    assert "my_compiler() called with FX graph:" in proc.stdout
    after = proc.stderr[proc.stderr.index("MODIFIED BYTECODE toy_example"):]
    assert re.search(r"possible source code:|depyf could not decompile", after)


def test_readme_first_example(tmp_path):
    run_example(tmp_path, README_FIRST_EXAMPLE)
    names = os.listdir(tmp_path / "dump_src_dir")
    assert "full_code_for_toy_example_0.py" in names and "__transformed_code_0_for_toy_example.py" in names


def test_blog_example_with_debug(tmp_path):
    run_example(tmp_path, BLOG_EXAMPLE)
    names = os.listdir(tmp_path / "depyf_debug_dir")
    assert "full_code_for_toy_example_0.py" in names and "__transformed_code_0_for_toy_example.py" in names


def test_debugger_example_pauses_in_pdb_and_goes_on(tmp_path):
    # "the program will pause here for you to set breakpoints": pdb's prompt, then `c`
    proc = run_example(tmp_path, DEBUGGER_EXAMPLE, stdin_text="c\n")
    assert "(Pdb)" in proc.stdout
    names = os.listdir(tmp_path / "dump_src_dir")
    assert "full_code_for_toy_example_0.py" in names
    assert any(n.endswith("Captured_Graph.0.py") for n in names), sorted(names)


def test_general_usage_example_prints_the_function(tmp_path):
    proc = run_example(tmp_path, GENERAL_USAGE_EXAMPLE)
    namespace = {}
    exec(compile(proc.stdout, "<printed>", "exec"), namespace)
    assert proc.stdout.startswith("def func():") and "print('hello, world!')" in proc.stdout
