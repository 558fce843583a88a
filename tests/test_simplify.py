"""The simplifier (depyf/_simplify.py, depyf/_fold_uses.py) on the shapes Dynamo's
decompiled code takes, and on every behaviour case.

Each shape is run twice, exact and simplified, against globals that record
every call with its arguments (lists by content and by identity, in order of
first appearance), and the two records and results must be equal.  Shapes the
model cannot prove exact must come back as None (the caller keeps the exact
form).
"""
import ast
import sys

import pytest

import behaviour_cases
import behaviour_outcome
import depyf
from depyf import _simplify

pytestmark = pytest.mark.skipif(sys.version_info < (3, 9), reason="ast.unparse is 3.9+")


class Recorder:
    """Globals whose functions log what they receive; lists are told apart by identity."""

    def __init__(self):
        self.log, self.ids = [], {}

    def shape(self, value):
        if isinstance(value, list):
            label = self.ids.setdefault(id(value), len(self.ids))
            return ("list#%d" % label, [self.shape(v) for v in value])
        if isinstance(value, tuple):
            return tuple(self.shape(v) for v in value)
        return value

    def fn(self, name, result=None):
        def call(*args, **kwargs):
            self.log.append((name, self.shape(list(args))[1], sorted(kwargs.items())))
            return result(*args) if callable(result) else result
        return call


def run(source, name, args, make_globals):
    rec = Recorder()
    namespace = make_globals(rec)
    exec(compile(source, "<%s>" % name, "exec"), namespace)
    result = namespace[name](*args)
    return rec.shape(result), rec.log


def dynamo_globals(rec):
    class Utils:
        record_pregraph_bytecode_enter = staticmethod(rec.fn("enter", "handle"))
        record_pregraph_bytecode_exit = staticmethod(rec.fn("exit"))

    return {
        "__import_torch_dot__dynamo_dot_utils": Utils,
        "__compiled_fn_1": rec.fn("graph", lambda a, b: (a > b, a - b)),
        "__resume_at_10_1": rec.fn("resume_true", "R1"),
        "__resume_at_20_2": rec.fn("resume_false", "R2"),
        "print": rec.fn("print"),
        "h": rec.fn("h", 7),
        "g": rec.fn("g", 8),
    }


def same_behaviour(exact, simple, name, inputs, make_globals=dynamo_globals):
    for args in inputs:
        assert run(exact, name, args, make_globals) == run(simple, name, args, make_globals), args


def statements(source):
    fn = ast.parse(source).body[0]
    return sum(isinstance(n, ast.stmt) for n in ast.walk(fn)) - 1


def temporaries(source):
    return {n.id for n in ast.walk(ast.parse(source)) if isinstance(n, ast.Name)
            and (n.id.startswith("__temp_") or n.id.startswith("tmp_"))}


# The decompiled transformed code of the seed's toy example (torch 2.13, Python 3.11),
# its graph and resume functions renamed.
TOY = '''
def toy(a, b):
    tmp_2 = (tmp_1 := __import_torch_dot__dynamo_dot_utils.record_pregraph_bytecode_enter)()
    (tmp_3 := __import_torch_dot__dynamo_dot_utils.record_pregraph_bytecode_exit)(tmp_2)
    del tmp_1
    del tmp_3
    graph_out_0 = __compiled_fn_1(a, b)
    __temp_1 = [()]
    __temp_2 = graph_out_0[0]
    __temp_3 = [graph_out_0[1]]
    __temp_4 = __temp_3[0:1]
    __temp_4.extend([b])
    del graph_out_0
    __temp_5 = [__temp_4]
    if __temp_2:
        __temp_5[0][0:0] = []
        __temp_6 = __temp_5[0]
        __temp_7 = [__temp_6]
        __temp_8 = __temp_1[0]
        __temp_9 = [__temp_8]
        __temp_10 = __temp_7[0]
        __temp_11 = __temp_10[1]
        __temp_12 = __temp_10[0]
        __temp_10[0:] = [__temp_11, __temp_12]
        __temp_13 = []
        __temp_14 = __temp_7[-1]
        del __temp_7[-1]
        __temp_15 = [__temp_13, __temp_7, *__temp_14]
        return __resume_at_10_1(*__temp_15)
    __temp_5[0][0:0] = []
    __temp_16 = __temp_5[0]
    __temp_17 = [__temp_16]
    __temp_20 = __temp_17[0]
    __temp_21 = __temp_20[1]
    __temp_22 = __temp_20[0]
    __temp_20[0:] = [__temp_21, __temp_22]
    __temp_23 = []
    __temp_24 = __temp_17[-1]
    del __temp_17[-1]
    __temp_25 = [__temp_23, __temp_17, *__temp_24]
    return __resume_at_20_2(*__temp_25)
'''
TOY_LOCALS = ("a", "b", "x", "graph_out_0", "tmp_1", "tmp_2", "tmp_3")
TOY_INPUTS = [(5, 3), (1, 4)]


def resume_params(name):
    return {"__resume_at_10_1": ("__nested_resume_fns", "__nested_frame_values", "b", "x"),
            "__resume_at_20_2": ("__nested_resume_fns", "__nested_frame_values", "b", "x")}.get(name)


def test_toy_example_reads_like_the_function_and_behaves_the_same():
    simple = _simplify.simplify(TOY, TOY_LOCALS, ("a", "b"), graph_outputs=True, resume_params=resume_params)
    assert simple is not None
    assert statements(TOY) >= 35 and statements(simple) <= 8, simple
    assert not temporaries(simple), simple
    assert "x = graph_out_0[1]" in simple and "__resume_at_10_1([], [], b, x)" in simple, simple
    same_behaviour(TOY, simple, "toy", TOY_INPUTS)


# The same with torch 2.15 (Python 3.11), which records its profiler markers only while a
# profiler runs.
TOY_215 = TOY.replace('''
    tmp_2 = (tmp_1 := __import_torch_dot__dynamo_dot_utils.record_pregraph_bytecode_enter)()
    (tmp_3 := __import_torch_dot__dynamo_dot_utils.record_pregraph_bytecode_exit)(tmp_2)
    del tmp_1
    del tmp_3
''', '''
    tmp_3 = __import_torch_dot_autograd_dot_profiler._is_profiler_enabled
    tmp_2 = __import_torch_dot__dynamo_dot_utils
    tmp_1 = None
    if tmp_3:
        tmp_1 = tmp_2.record_pregraph_bytecode_enter()
    if not tmp_1 is None:
        tmp_2.record_pregraph_bytecode_exit(tmp_1)
''')


@pytest.mark.parametrize("profiling", [False, True])
def test_torch_215_profiler_markers_fold_into_one_conditional_binding(profiling):
    assert TOY_215 != TOY
    simple = _simplify.simplify(TOY_215, TOY_LOCALS, ("a", "b"), graph_outputs=True, resume_params=resume_params)
    assert simple is not None and statements(simple) <= 8, simple
    assert "record_pregraph_bytecode_enter() if __import_torch_dot_autograd_dot_profiler._is_profiler_enabled " \
        "else None  # Dynamo's profiler markers" in simple, simple
    assert "if tmp_1 is not None:" in simple and "tmp_2" not in simple and "tmp_3" not in simple, simple

    def with_profiler(rec):
        names = dynamo_globals(rec)
        names["__import_torch_dot_autograd_dot_profiler"] = type("Profiler", (), {"_is_profiler_enabled": profiling})
        return names
    same_behaviour(TOY_215, simple, "toy", TOY_INPUTS, with_profiler)


@pytest.mark.parametrize("body,kept", [
    # the constant store is read by the folded value: it cannot move past it
    ("tmp_2 = h(a, b)\n    b = None\n    return g(tmp_2, b)", "tmp_2 = h(a, b)"),
    # inside a try, the value raising could reach the finally block, which reads the store
    ("try:\n        tmp_2 = h(a)\n        b = 3\n        return __resume_at_10_1(tmp_2)\n    finally:\n        g(b)", "tmp_2 = h(a)"),
    # the test reads the name bound conditionally: it stays two statements
    ("b = None\n    if h(b):\n        b = g(a)\n    return b", "b = None"),
])
def test_values_do_not_move_past_a_store_that_could_see_it(body, kept):
    source = "def f(a, b):\n    %s\n" % body
    simple = _simplify.simplify(source, ("a", "b", "tmp_1", "tmp_2"), ("a", "b"), graph_outputs=True)
    assert simple is not None and kept in simple, simple
    same_behaviour(source, simple, "f", [(1, 2)])


def test_chained_assignments_evaluate_once_and_bind_every_name():
    # torch <= 2.7 reaches a module's parameters so (decompiled: `a = b = v` then v read back)
    source = '''
def f(a, b):
    tmp_4 = tmp_5 = h(a)
    tmp_7 = tmp_8 = g(tmp_5, 'tok')
    __temp_3 = __temp_4 = g(tmp_8, b)
    __temp_5 = __temp_6 = [__temp_3, a]
    tmp_9 = tmp_10 = b
    return __resume_at_10_1(__temp_4, tmp_7, *__temp_6, tmp_9, tmp_10)
'''
    local_names = ("a", "b") + tuple("tmp_%d" % i for i in range(11))
    simple = _simplify.simplify(source, local_names, ("a", "b"), graph_outputs=True)
    assert simple is not None and "__temp_5" not in simple and "tmp_4" not in simple, simple
    assert simple.count("h(a)") == 1 and simple.count("g(") == 2, simple
    same_behaviour(source, simple, "f", [(1, 2)])


def test_without_resume_parameter_names_the_graph_output_stays_inline():
    simple = _simplify.simplify(TOY, TOY_LOCALS, ("a", "b"), graph_outputs=True)
    assert "__resume_at_10_1([], [], b, graph_out_0[1])" in simple, simple
    same_behaviour(TOY, simple, "toy", TOY_INPUTS)


def test_ordinary_code_keeps_the_graph_output_tuple_and_its_del():
    # without the graph-output fact, reading graph_out_0[0] is an operation: it stays in place
    simple = _simplify.simplify(TOY, TOY_LOCALS, ("a", "b"))
    assert simple is not None and "del graph_out_0" in simple, simple
    assert "__temp_2 = graph_out_0[0]" in simple, simple
    same_behaviour(TOY, simple, "toy", TOY_INPUTS)


@pytest.mark.parametrize("body", [
    # a list used after it was passed on: its identity shows
    "__temp_1 = [a]\n    g(__temp_1)\n    return h(*__temp_1)",
    # the same list passed twice
    "__temp_1 = [a]\n    return g(__temp_1, __temp_1)",
    # an item that is an operation, inside an expression: evaluating it first would reorder
    "return g(h(), [h(a)])",
    # loops are outside the model
    "__temp_1 = [a]\n    for i in range(2):\n        g(i)\n    return g(*__temp_1)",
    # an unknown list method
    "__temp_1 = [a, b]\n    __temp_1.sort()\n    return g(*__temp_1)",
    # a temporary read in a nested scope
    "__temp_1 = [a]\n    return (lambda: __temp_1)()",
    # an index out of range
    "__temp_1 = [a]\n    return g(__temp_1[3])",
])
def test_what_the_model_cannot_prove_is_refused(body):
    source = "def f(a, b):\n    %s\n" % body
    assert _simplify.simplify(source, ("a", "b", "i"), ("a", "b")) is None


@pytest.mark.parametrize("use,expected_end", [
    # an operation (the global h is no name Dynamo binds) runs before the read: the temporary stays
    ("g(h(b), tmp_2)", "g(h(b), tmp_2)"),
    # only a resume function, an argument and a constant before the read: it folds
    ("__resume_at_10_1(b, 3, tmp_2)", "__resume_at_10_1(b, 3, h(a))"),
])
def test_a_temporary_read_once_folds_only_past_pure_operands(use, expected_end):
    source = "def f(a, b):\n    tmp_2 = h(a)\n    return %s\n" % use
    simple = _simplify.simplify(source, ("a", "b", "tmp_2"), ("a", "b"), graph_outputs=True)
    assert simple.strip().endswith("return " + expected_end), simple
    same_behaviour(source, simple, "f", [(1, 2)])


def test_list_surgery_keeps_order_identity_and_contents():
    source = '''
def f(a, b):
    __temp_1 = [h(a), b]
    __temp_2 = [__temp_1, []]
    __temp_2[0].append(g(b))
    del __temp_2[0][0]
    __temp_2[1][0:0] = [a, a]
    __temp_3 = __temp_2[0][:]
    return g(*__temp_2, __temp_3)
'''
    simple = _simplify.simplify(source, ("a", "b"), ("a", "b"))
    assert simple is not None and "__temp_2" not in simple and "__temp_3" not in simple, simple
    same_behaviour(source, simple, "f", [(1, 2), ([], ())])


def test_every_behaviour_case_behaves_the_same_simplified():
    changed = 0
    for fn, inputs in behaviour_cases.CASES:
        exact = depyf.decompile(fn)
        simple = depyf.decompile(fn, simplify=True)
        if simple == exact:
            continue
        changed += 1
        namespace = {}
        exec(compile(simple, "<simplified %s>" % fn.__name__, "exec"), fn.__globals__, namespace)
        new = namespace[fn.__name__]
        new.__defaults__, new.__kwdefaults__ = fn.__defaults__, fn.__kwdefaults__
        for args in inputs:
            assert behaviour_outcome.call(new, args) == behaviour_outcome.call(fn, args), (fn.__name__, simple)
    assert changed >= 1, "ast.unparse reformats every function it accepts"


def test_a_named_constant_keeps_its_comment_where_it_is_first_used():
    source = ("def f(a):\n    __temp_1 = [_depyf_const_0, a]  # _depyf_const_0: <code object g>\n"
              "    return h(*__temp_1)\n")
    simple = _simplify.simplify(source, ("a",), ("a",))
    assert simple.splitlines()[1].strip() == "return h(_depyf_const_0, a)  # _depyf_const_0: <code object g>", simple


def test_another_comment_keeps_the_exact_form():
    source = "def f(a):\n    # depyf: a note the printer placed\n    __temp_1 = [a]\n    return h(*__temp_1)\n"
    assert _simplify.simplify(source, ("a",), ("a",)) is None


def as_one_state_machine(source):
    """`source` (a def whose body is straight-line code ending in `return`) as the
    decompiler's state machine of one state, its __temp_<n> renamed to the machine's."""
    head, *body = source.strip("\n").split("\n")
    lines = [head, "    # depyf: no structured form was found (test);",
             "    # this is an equivalent state machine over the bytecode's blocks",
             "    ___state = 0", "    while True:", "        if ___state == 0:"]
    lines += ["        " + line.replace("__temp_", "___t") for line in body]
    return "\n".join(lines) + "\n"


STRAIGHT = '''
def straight(a, b):
    graph_out_0 = __compiled_fn_1(a, b)
    __temp_1 = [graph_out_0[1]]
    __temp_2 = __temp_1[0:1]
    __temp_2.extend([b])
    del graph_out_0
    __temp_3 = [[], __temp_2[0], __temp_2[1]]
    return __resume_at_10_1(*__temp_3)
'''


def test_a_one_state_machine_reads_as_its_block():
    machine = as_one_state_machine(STRAIGHT)
    assert "while True:" in machine and "___t1" in machine
    simple = _simplify.simplify(machine, ("a", "b", "graph_out_0"), ("a", "b"), graph_outputs=True)
    assert simple is not None, machine
    assert "while" not in simple and "state" not in simple and not temporaries(simple), simple
    assert simple == _simplify.simplify(STRAIGHT, ("a", "b", "graph_out_0"), ("a", "b"), graph_outputs=True)
    same_behaviour(machine, simple, "straight", TOY_INPUTS)


@pytest.mark.parametrize("change", [
    # the block falls off its end: the loop would run it again
    lambda m: m.replace("            return __resume_at_10_1(*___t3)\n", "            g(___t3)\n"),
    # the block leaves the loop itself
    lambda m: m.replace("            return __resume_at_10_1(*___t3)\n",
                        "            if a:\n                break\n            return g(___t3)\n"),
    # the block reads the state
    lambda m: m.replace("[], ___t2[0]", "[___state], ___t2[0]"),
    # a second state
    lambda m: m.replace("            return __resume_at_10_1(*___t3)\n",
                        "            ___state = 1\n            continue\n        if ___state == 1:\n"
                        "            return __resume_at_10_1(*___t3)\n"),
])
def test_a_machine_that_is_not_one_pass_over_one_block_stays(change):
    machine = change(as_one_state_machine(STRAIGHT))
    assert machine != as_one_state_machine(STRAIGHT)
    simple = _simplify.simplify(machine, ("a", "b", "graph_out_0"), ("a", "b"), graph_outputs=True)
    assert simple is None or "while True:" in simple, simple
