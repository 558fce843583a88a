"""depyf never breaks the user's program: a piece it cannot decompile, or a torch
hook that misbehaves, costs one warning and a comment in a file; leaving the
block restores every patched torch internal, also after an exception."""
import logging
import sys

import pytest

torch = pytest.importorskip("torch")

import depyf  # noqa: E402
import dump_helpers as dh  # noqa: E402
import torch_workloads as wl  # noqa: E402
from depyf import _core  # noqa: E402
from depyf import _torch_internals as ti  # noqa: E402

pytestmark = pytest.mark.torch


def depyf_warnings(caplog):
    return [r for r in caplog.records if r.name == "depyf" and r.levelno == logging.WARNING]


def test_code_that_cannot_be_decompiled_leaves_its_disassembly_and_one_warning(
        tmp_path, monkeypatch, caplog):
    def refuse(code, *args, **kwargs):
        raise RuntimeError("cannot decompile %s at offset 0: injected failure" % code.co_name)

    monkeypatch.setattr(_core, "decompile", refuse, raising=False)
    expected = dh.plain(wl.run_toy, "eager")
    with caplog.at_level(logging.WARNING, logger="depyf"):
        results, printed = dh.under_prepare_debug(wl.run_toy, "eager", tmp_path)
    dh.assert_identical(results, expected)
    [warning] = depyf_warnings(caplog)
    assert "injected failure" in warning.getMessage()
    text = dh.read(tmp_path, "__transformed_code_0_for_toy_example.py")
    assert text.startswith("# depyf could not decompile the transformed code of toy_example")
    assert "injected failure" in text and "LOAD_GLOBAL" in text and "RETURN_VALUE" in text
    [entry] = ti.cache_entries(wl.toy_example.__code__)
    assert entry.code.co_filename == wl.toy_example.__code__.co_filename, \
        "without decompiled source Dynamo's code runs untouched"
    assert "could not decompile" in printed
    dh.assert_every_file_compiles(tmp_path)


@pytest.mark.hook_failures_expected
def test_a_failing_torch_hook_is_logged_once_and_changes_nothing(tmp_path, monkeypatch, caplog):
    def broken(gm):
        raise AttributeError("graph printing moved in this torch")

    monkeypatch.setattr(ti, "readable_graph", broken)
    monkeypatch.setattr(ti, "graph_code", broken)
    ti._reported.discard("graph logging")
    expected = dh.plain(wl.run_toy_grad, "aot_eager")
    with caplog.at_level(logging.WARNING, logger="depyf"):
        results, _printed = dh.under_prepare_debug(wl.run_toy_grad, "aot_eager", tmp_path)
    dh.assert_identical(results, expected)
    failures = [r for r in depyf_warnings(caplog) if "graph logging hook failed" in r.getMessage()]
    assert len(failures) == 1 and "graph printing moved" in failures[0].getMessage()
    assert "full_code_for_toy_example_0.py" in dh.files(tmp_path)


def patched_internals():
    """Everything prepare_debug patches, as it is now."""
    import torch._functorch.config as fconfig
    import torch._inductor.config as iconfig
    from torch._inductor.codecache import PyCodeCache

    def bindings(function):
        return {name: vars(m).get(function) for name, m in list(sys.modules.items())
                if name.startswith("torch") and m is not None and function in vars(m)}

    from torch._logging._internal import trace_log

    return {
        "graph logging": bindings("lazy_format_graph_code"),
        "structured trace": (bindings("trace_structured"), list(trace_log.handlers), trace_log.level,
                             trace_log.propagate),
        "recompile": torch.fx.GraphModule.__dict__["recompile"],
        "code cache": PyCodeCache.__dict__["load_by_key_path"],
        "bytecode hooks": dict(torch._dynamo.convert_frame._bytecode_hooks),
        "caches": (fconfig.enable_autograd_cache, iconfig.fx_graph_cache),
    }


def test_leaving_after_an_exception_restores_every_patched_internal(tmp_path):
    dh.plain(wl.run_toy_grad, "aot_eager")  # import every torch module compiling touches
    before = patched_internals()
    torch._dynamo.reset()
    compiled = torch.compile(wl.toy_example, backend="aot_eager")
    with pytest.raises(ValueError, match="the user's own error"):
        with depyf.prepare_debug(str(tmp_path)):
            assert patched_internals() != before
            compiled(torch.randn(4), torch.randn(4))
            raise ValueError("the user's own error")
    assert patched_internals() == before
    assert "full_code_for_toy_example_0.py" in dh.files(tmp_path), "what was compiled is dumped"
