"""prepare_debug across the ways code gets compiled: recompilations, code compiled
before the block, dynamic shapes, no grad, the older call form, and misuse."""
import re

import pytest

torch = pytest.importorskip("torch")

import depyf  # noqa: E402
import dump_helpers as dh  # noqa: E402
from depyf import _dump  # noqa: E402

pytestmark = pytest.mark.torch


def scaled(x, y):
    return torch.cos(x) * y - x


@pytest.fixture(autouse=True)
def fresh_dynamo():
    torch._dynamo.reset()
    yield
    torch._dynamo.reset()


def test_each_recompilation_gets_its_own_number_and_guard(tmp_path, capsys):
    compiled = torch.compile(scaled, backend="eager", dynamic=False)
    shapes = [(3,), (3, 4), (2, 3, 4)]  # each rank change forces a new cache entry
    with depyf.prepare_debug(str(tmp_path)):
        outs = [compiled(torch.ones(s), torch.ones(s)) for s in shapes]
    for out, s in zip(outs, shapes):
        assert torch.equal(out, scaled(torch.ones(s), torch.ones(s)))
    names = dh.files(tmp_path)
    assert [n for n in names if n.startswith("__transformed_code_")] == [
        "__transformed_code_%d_for_scaled.py" % i for i in range(3)]
    text = dh.read(tmp_path, "full_code_for_scaled_0.py")
    dispatch = text[text.index("def transformed_scaled(x, y):"):]
    checks = re.findall(r"if __guard_(\d)_for_scaled\(", dispatch)
    assert checks == [str(i) for i in _entry_order(scaled)], "guards are checked in Dynamo's order"
    assert "recompilations: 2" in capsys.readouterr().err


def _entry_order(fn):
    """Transformed-code numbers in the order Dynamo's cache checks its entries (newest first)."""
    from depyf import _torch_internals as ti
    entries = ti.cache_entries(fn.__code__)
    ids = {e.compile_id: i for i, e in enumerate(sorted(entries, key=lambda e: e.compile_id))}
    return [ids[e.compile_id] for e in entries]


def test_functions_compiled_before_the_block_are_dumped_too(tmp_path, capsys):
    compiled = torch.compile(scaled, backend="eager")
    compiled(torch.ones(3), torch.ones(3))
    with depyf.prepare_debug(str(tmp_path)):
        out = compiled(torch.ones(3), torch.ones(3))  # a cache hit: nothing compiles here
    assert torch.equal(out, scaled(torch.ones(3), torch.ones(3)))
    names = dh.files(tmp_path)
    assert "full_code_for_scaled_0.py" in names
    assert "__transformed_code_0_for_scaled.py" in names
    text = dh.read(tmp_path, "full_code_for_scaled_0.py")
    assert "compiled before depyf started dumping" in text
    assert "functions: 1 (scaled)" in capsys.readouterr().err
    dh.assert_every_file_compiles(tmp_path)


def test_dynamic_shapes_show_symbolic_sizes(tmp_path):
    compiled = torch.compile(scaled, backend="aot_eager", dynamic=True)
    with depyf.prepare_debug(str(tmp_path)):
        outs = [compiled(torch.ones(n), torch.ones(n)) for n in (3, 5, 8)]
    assert all(torch.equal(o, scaled(torch.ones(n), torch.ones(n))) for o, n in zip(outs, (3, 5, 8)))
    assert [n for n in dh.files(tmp_path) if n.startswith("__transformed_code_")] == [
        "__transformed_code_0_for_scaled.py"], "one dynamic entry serves every size"
    forward = dh.read(tmp_path, "__compiled_fn_%s.Forward_graph.0.py" % _first_fn(tmp_path))
    assert re.search(r"\bs\d+\b", forward), "the graph takes a symbolic size"


def _first_fn(dump_dir):
    return min(int(re.match(r"__compiled_fn_(\d+)\.", n).group(1))
               for n in dh.files(dump_dir) if n.startswith("__compiled_fn_"))


def test_without_grad_there_is_no_backward_graph(tmp_path):
    compiled = torch.compile(scaled, backend="aot_eager")
    x = torch.ones(4, requires_grad=True)
    with depyf.prepare_debug(str(tmp_path)), torch.no_grad():
        out = compiled(x, x)
    assert torch.equal(out, scaled(x, x).detach())
    stages = dh.stage_files(tmp_path, "__compiled_fn_%d" % _first_fn(tmp_path))
    assert "Forward_graph" in stages and "Backward_graph" not in stages and "Joint_graph" not in stages


def test_the_older_form_with_a_function_first(tmp_path):
    compiled = torch.compile(scaled, backend="eager")
    with depyf.prepare_debug(compiled, str(tmp_path)):
        compiled(torch.ones(2), torch.ones(2))
    assert "full_code_for_scaled_0.py" in dh.files(tmp_path)
    with pytest.raises(TypeError):
        with depyf.prepare_debug(str(tmp_path), str(tmp_path)):
            pass


def test_a_reused_directory_continues_the_numbering(tmp_path):
    compiled = torch.compile(scaled, backend="eager", dynamic=False)
    with depyf.prepare_debug(str(tmp_path)):
        compiled(torch.ones(2), torch.ones(2))
    with depyf.prepare_debug(str(tmp_path)):
        compiled(torch.ones(2, 2), torch.ones(2, 2))
    assert [n for n in dh.files(tmp_path) if n.startswith("__transformed_code_")] == [
        "__transformed_code_0_for_scaled.py", "__transformed_code_1_for_scaled.py"]
    assert [n for n in dh.files(tmp_path) if n.startswith("full_code")] == ["full_code_for_scaled_0.py"]


def test_blocks_do_not_nest_and_debug_needs_prepare_debug(tmp_path, monkeypatch):
    with depyf.prepare_debug(str(tmp_path / "a")):
        with pytest.raises(RuntimeError, match="do not nest"):
            with depyf.prepare_debug(str(tmp_path / "b")):
                pass
    monkeypatch.setattr(_dump, "_last_dir", [None])
    with pytest.raises(RuntimeError, match="prepare_debug"):
        with depyf.debug():
            pass


def test_debug_reruns_from_the_dump_without_pausing_off_a_terminal(tmp_path, capsys):
    compiled = torch.compile(scaled, backend="eager")
    with depyf.prepare_debug(str(tmp_path)):
        compiled(torch.ones(2), torch.ones(2))
    with depyf.debug():  # stdin is not a terminal under pytest: no pause
        out = compiled(torch.ones(2), torch.ones(2))
    assert torch.equal(out, scaled(torch.ones(2), torch.ones(2)))
    printed = capsys.readouterr().err
    assert str(tmp_path) in printed and "Captured_Graph" in printed


def test_a_compiled_lambda_and_closures_dump_python(tmp_path):
    # a lambda's code is `<lambda>`: every def in the dump needs a valid name;
    # a closure created after a graph break loads code objects and the
    # globals dict as constants, which have no literal form
    double = torch.compile(lambda x: torch.sin(x) * 2, backend="eager")

    def outer(x):
        y = x * 2

        def inner(z):
            return z + y

        def printer(z):
            print("graph break")
            return inner(z)
        return printer(x) * 3

    compiled_outer = torch.compile(outer, backend="eager")
    x = torch.arange(3.0)
    with depyf.prepare_debug(str(tmp_path)):
        got = [double(x), compiled_outer(x)]
    dh.assert_identical(got, [torch.sin(x) * 2, ((x + x * 2) * 3)])
    dh.assert_every_file_compiles(tmp_path)
    names = dh.files(tmp_path)
    full = [n for n in names if n.startswith("full_code_for_") and "lambda" in n]
    assert full, names
    text = dh.read(tmp_path, full[0])
    assert "<lambda>(" not in text and "def transformed__lambda(" in text, text
    outer_text = dh.read(tmp_path, next(n for n in names if n.startswith("__transformed_code_0_for_outer")))
    assert "_depyf_const_" in outer_text and "<code object" in outer_text.split("#", 1)[1], outer_text
