"""The original depyf's (0.20.0) public names that need torch, on real torch.compile runs:
the wrapper class vLLM's compile path was built on, Decompiler.decompile_and_compile_like on
Dynamo's code, prepare_debug's clean_wild_fx_code and log_bytecode, DEPYF_REMOVE_TEMP,
depyf.explain's modules, and debug() pausing with pdb commands piped into stdin."""
import gc
import logging
import os
import re
import subprocess
import sys
import types
import weakref

import pytest

torch = pytest.importorskip("torch")

import depyf  # noqa: E402
import dump_helpers as dh  # noqa: E402
from depyf import _dump  # noqa: E402
from depyf.decompiler import Decompiler  # noqa: E402
from depyf.optimization import TorchCompileWrapperWithCustomDispatcher  # noqa: E402

pytestmark = pytest.mark.torch

# Subprocesses import the depyf this test imported (the installed one under
# tools/test.sh, the checkout's in a developer build).
DEPYF_HOME = os.path.dirname(os.path.dirname(os.path.abspath(depyf.__file__)))


@pytest.fixture(autouse=True)
def fresh_dynamo():
    torch._dynamo.reset()
    yield
    torch._dynamo.reset()


def counting_backend(calls):
    """A backend whose compiled graphs count their calls (then run the graph as is)."""
    def backend(gm, example_inputs):
        def run(*args):
            calls.append(gm)
            return gm.forward(*args)
        return run
    return backend


class Stack(TorchCompileWrapperWithCustomDispatcher):
    def __init__(self, backend, use_custom_dispatcher=True, depth=3):
        torch.manual_seed(0)
        self.layers = torch.nn.ModuleList([torch.nn.Linear(4, 4) for _ in range(depth)])
        compiled = torch.compile(self.forward, backend=backend, dynamic=False)
        super().__init__(compiled, use_custom_dispatcher=use_custom_dispatcher)

    def forward(self, x):
        for layer in self.layers:
            x = torch.relu(layer(x)) + 1
        return x

    def __call__(self, x):
        if self.use_custom_dispatcher and self.compiled_codes:
            with self.dispatch_to_code(0):
                return self.forward(x)
        return self.compiled_callable(x)


def eager(mod, x):
    return Stack.forward(mod, x)  # (the class's own code: nothing dispatched)


def test_the_wrapper_runs_the_compiled_code_without_guards():
    calls = []
    mod = Stack(counting_backend(calls))
    x = torch.randn(2, 4)
    assert torch.equal(mod(x), eager(mod, x))
    assert len(mod.compiled_codes) == 1 and len(calls) == 1
    assert mod.original_code_object is Stack.forward.__code__
    assert mod.compiled_codes[0] is not mod.original_code_object
    # a shape Dynamo's guards reject (dynamic=False): dispatched, the same compiled code runs
    wider = torch.randn(5, 4)
    assert torch.equal(mod(wider), eager(mod, wider))
    assert len(calls) == 2 and len(mod.compiled_codes) == 1
    assert Stack.forward.__code__ is mod.original_code_object  # put back after the block


def test_without_the_custom_dispatcher_calls_go_through_dynamos_guards():
    calls = []
    mod = Stack(counting_backend(calls), use_custom_dispatcher=False)
    for rows in (2, 5):
        x = torch.randn(rows, 4)
        assert torch.equal(mod(x), eager(mod, x))
    assert len(mod.compiled_codes) == 2 and len(calls) == 2  # the new shape compiled again


def test_dispatch_to_code_puts_the_code_back_when_the_block_raises():
    mod = Stack("eager")
    mod(torch.randn(2, 4))
    with pytest.raises(RuntimeError, match="boom"):
        with mod.dispatch_to_code(0):
            assert Stack.forward.__code__ is mod.compiled_codes[0]
            raise RuntimeError("boom")
    assert Stack.forward.__code__ is mod.original_code_object


def test_each_wrapper_keeps_only_the_code_compiled_for_it_and_is_not_kept_alive():
    first, second = Stack("eager"), Stack("eager", depth=2)  # (another depth: Dynamo compiles again)
    first(torch.randn(2, 4))
    second(torch.randn(2, 4))
    assert len(first.compiled_codes) == 1 and len(second.compiled_codes) == 1
    assert first.compiled_codes[0] is not second.compiled_codes[0]
    gone = weakref.ref(first)
    del first
    gc.collect()
    assert gone() is None  # the bytecode hook held it weakly (the original's kept it forever)
    third = Stack("eager", depth=1)  # a compile after that finds no dead wrapper's hook
    third(torch.randn(2, 4))
    assert len(third.compiled_codes) == 1


def test_the_original_docs_example_of_the_wrapper():
    # depyf's documentation ("Optimizing the Code"), with 5 modules instead of 100
    class F(torch.nn.Module):
        def __init__(self, i):
            super().__init__()
            self.i = i

        def forward(self, x):
            return x + self.i

    class Mod(TorchCompileWrapperWithCustomDispatcher):
        def __init__(self, n: int):
            self.fs = torch.nn.ModuleList([F(i) for i in range(n)])
            compiled_callable = torch.compile(self.forward)
            super().__init__(compiled_callable)

        def forward(self, x):
            for f in self.fs:
                x = f(x)
            return x

        def __call__(self, x):
            if len(self.compiled_codes) == 1:
                with self.dispatch_to_code(0):
                    return self.forward(x)
            else:
                return self.compiled_callable(x)

    mod = Mod(5)
    assert mod(torch.tensor([1])).tolist() == [11]  # compiles
    for value in range(3):
        assert mod(torch.tensor([value])).tolist() == [value + 10]
    assert len(mod.compiled_codes) == 1


def test_decompile_and_compile_like_on_dynamos_code_runs_in_its_place(tmp_path):
    calls = []
    mod = Stack(counting_backend(calls))
    x = torch.randn(2, 4)
    mod(x)
    template = str(tmp_path / "__transformed_code_%s_for_forward.py")
    back = Decompiler.decompile_and_compile_like(mod.compiled_codes[0], mod.original_code_object,
                                                 filepath_template=template)
    assert back.co_filename == template % 0 and back.co_name == "__transformed_code_0_for_forward"
    with open(back.co_filename) as f:
        assert f.read().startswith("def __transformed_code_0_for_forward(self, x):")
    mod.compiled_codes.append(back)
    with mod.dispatch_to_code(1):
        out = mod.forward(x)
    assert torch.equal(out, eager(mod, x)) and len(calls) == 2  # the graph ran, from the file's code


def test_temp_prefix_renames_the_temporaries_in_dynamos_code():
    mod = Stack("eager")
    mod(torch.randn(2, 4))
    exact = Decompiler(mod.compiled_codes[0]).decompile()
    renamed = Decompiler(mod.compiled_codes[0]).decompile(temp_prefix="v_")
    invented = re.compile(r"\b(?:__temp_\d+|_{2,}t\d+)\b")
    assert invented.search(exact), exact
    assert not invented.search(renamed) and re.search(r"\bv_1\b", renamed)
    compile(renamed, "<renamed>", "exec")
    # nothing but the temporaries changed
    assert invented.sub("T", exact) == re.sub(r"\bv_\d+\b", "T", renamed)


def scaled(x, y):
    return torch.cos(x) * y - x


class Doubler(torch.nn.Module):
    def forward(self, x):
        return torch.relu(x) * 2


def test_prepare_debug_keeps_wild_fx_code_only_when_asked(tmp_path):
    compiled = torch.compile(scaled, backend="eager")
    for clean, folder in ((True, tmp_path / "clean"), (False, tmp_path / "kept")):
        torch._dynamo.reset()
        with depyf.prepare_debug(str(folder), clean_wild_fx_code=clean, report=False):
            compiled(torch.ones(3), torch.ones(3))
            traced = torch.fx.symbolic_trace(Doubler())  # FX code no compiled function owns
        wild = [n for n in dh.files(folder) if n.startswith("fx_graph_code_")]
        if clean:
            assert wild == []
        else:
            assert len(wild) == 1, dh.files(folder)
            assert traced.code.strip() in dh.read(folder, wild[0])
        # the compiled function's own graph is in its __compiled_fn_ file either way, not here
        assert any(n.endswith("Captured_Graph.0.py") for n in dh.files(folder))


def test_prepare_debug_takes_the_original_arguments_and_passes_log_bytecode_on(tmp_path, monkeypatch):
    seen = []
    real_init = _dump.Session.__init__

    def spy(self, dd, *args, **kwargs):
        seen.append(kwargs.get("log_bytecode"))
        real_init(self, dd, *args, **kwargs)

    monkeypatch.setattr(_dump.Session, "__init__", spy)
    compiled = torch.compile(scaled, backend="eager")
    with depyf.prepare_debug(str(tmp_path / "a"), True, True, report=False):  # (positionally, as the original)
        compiled(torch.ones(2), torch.ones(2))
    with depyf.prepare_debug(str(tmp_path / "b"), log_bytecode=False, report=False):
        compiled(torch.ones(2), torch.ones(2))
    assert seen == [True, False]
    assert "full_code_for_scaled_0.py" in dh.files(tmp_path / "a")
    with pytest.raises(TypeError, match="log_bytecode"):
        with depyf.prepare_debug(str(tmp_path / "c"), log_bytecode="yes"):
            pass


def toy(a, b):
    x = a / (torch.abs(a) + 1)
    if b.sum() < 0:
        b = b * -1
    return x * b


@pytest.mark.parametrize("value, form", [(None, "Simplified"), ("1", "Simplified"), ("0", "Checked equivalent")])
def test_depyf_remove_temp_switches_the_folding_of_temporaries(tmp_path, monkeypatch, value, form):
    if value is None:
        monkeypatch.delenv("DEPYF_REMOVE_TEMP", raising=False)
    else:
        monkeypatch.setenv("DEPYF_REMOVE_TEMP", value)
    compiled = torch.compile(toy, backend="eager")
    a, b = torch.randn(5), torch.randn(5)
    with depyf.prepare_debug(str(tmp_path), report=False):
        out = compiled(a, b)
    assert torch.equal(out, toy(a, b))
    text = dh.read(tmp_path, "__transformed_code_0_for_toy.py")
    assert "# " + form in text
    assert ("__temp_" in text) == (value == "0")


def test_the_explain_modules_of_the_original():
    from depyf.explain import dump_src
    from depyf.explain import enable_debugging, enhance_logging

    assert enable_debugging.prepare_debug is depyf.prepare_debug and enable_debugging.debug is depyf.debug
    assert enhance_logging.install is depyf.install and enhance_logging.uninstall is depyf.uninstall
    compiled = torch.compile(scaled, backend="eager")
    compiled(torch.ones(2), torch.ones(2))
    # the original's dump_src(code, module) and ours, dump_src(fn), explain the same
    assert dump_src(scaled.__code__, sys.modules[__name__]) == dump_src(compiled)
    assert dump_src(scaled.__code__, globals()) == dump_src(compiled)


def test_the_original_bytecode_hook_logs_the_decompiled_source(caplog):
    from depyf.explain import enhance_logging

    codes = []
    remove = torch._dynamo.convert_frame.register_bytecode_hook(lambda old, new: codes.append((old, new)))
    try:
        torch.compile(scaled, backend="eager")(torch.ones(2), torch.ones(2))
    finally:
        remove.remove()
    torch._logging.set_logs(bytecode=True)
    try:
        with caplog.at_level(logging.DEBUG):
            enhance_logging.pytorch_bytecode_src_hook(*codes[0])
    finally:
        torch._logging.set_logs()
    assert "possible source code:" in caplog.text and "__compiled_fn_" in caplog.text


DEBUG_SCRIPT = """
import torch
import depyf

@torch.compile(backend="eager")
def double(a):
    return a * 2 + 1

with depyf.prepare_debug("dump", report=False):
    double(torch.ones(2))
with depyf.debug():
    print("RESULT", double(torch.full((2,), 3.0)).tolist())
"""


@pytest.mark.parametrize("stdin, pauses", [("c\n", True), ("", False), (subprocess.DEVNULL, False)],
                         ids=["pdb commands piped in", "an empty pipe", "/dev/null"])
def test_debug_pauses_when_stdin_can_answer(tmp_path, stdin, pauses):
    (tmp_path / "script.py").write_text(DEBUG_SCRIPT)
    env = dict(os.environ, PYTHONPATH=DEPYF_HOME + os.pathsep + os.environ.get("PYTHONPATH", ""))
    env.pop("PYTHONBREAKPOINT", None)
    options = {"input": stdin} if isinstance(stdin, str) else {"stdin": stdin}
    proc = subprocess.run([sys.executable, "script.py"], cwd=str(tmp_path), capture_output=True, text=True,
                          timeout=600, env=env, **options)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "RESULT [7.0, 7.0]" in proc.stdout
    assert ("(Pdb)" in proc.stdout) == pauses, proc.stdout
    if pauses:  # pdb stopped before the program's result, then `c` let it run on
        assert proc.stdout.index("(Pdb)") < proc.stdout.index("RESULT")
