"""Dynamo's transformed code, kept as marshalled code objects (tests/data/dynamo/,
`<workload>.cpython-3X.marshal`, from tests/torch/torch_workloads.py under the
torch release named below), decompiled without torch on the Python that made it.

- context_break (torch 2.13.0): a graph break inside `with torch.no_grad()`.
  Dynamo's code enters the with's try/finally with the values it passes on to
  the resume function still on the stack, and its handler drops them: no
  compiler writes that.  On 3.10 (SETUP_FINALLY) the body's call even
  consumes values from below the block's level, so an exception reaches the
  handler on a shallower stack than the block was set up on.  It must come
  out structured and checked (translation validation, with Dynamo's globals
  taken as stable), not as the state machine.  Both it and the state machine
  must also do what Dynamo's code does, run on stand-ins for what Dynamo binds
  in the frame's globals, with the body's call returning and raising.

The same shape, hand-assembled, is checked on 3.9 and 3.10 below.
"""
import ast
import builtins
import dis
import glob
import marshal
import os
import sys
import types

import pytest

from depyf import _core

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "dynamo")
TAG = "cpython-%d%d" % sys.version_info[:2]
FILES = sorted(glob.glob(os.path.join(DATA, "*.%s.marshal" % TAG)))
BREAKS = [p for p in FILES if os.path.basename(p).startswith("context_break.")]


@pytest.mark.skipif(not FILES, reason="no Dynamo bytecode kept for Python %d.%d" % sys.version_info[:2])
@pytest.mark.parametrize("path", FILES, ids=[os.path.basename(p) for p in FILES])
def test_dynamo_code_is_structured_and_checked(path):
    with open(path, "rb") as f:
        code = marshal.load(f)
    before = _core.validation_stats()
    source = _core.decompile(code, stable_globals=True)
    after = _core.validation_stats()
    assert "state machine" not in source, source
    assert after["validated"] == before["validated"] + 1, (before, after)  # validated, not just printed
    tree = ast.parse(source)
    tries = [n for n in ast.walk(tree) if isinstance(n, ast.Try)]
    assert tries and all(t.finalbody and not t.handlers for t in tries), source


def stand_ins(code, log, fail):
    """Globals for context_break's transformed `code`: the graph, the profiler hooks,
    torch's grad mode, the builtins Dynamo reads and the resume function record
    what is done with them in `log`; print raises KeyError when `fail`."""
    def recorder(what, result=None):
        def record(*args):
            log.append((what,) + args)
            return result
        return record

    def printer(*args):
        log.append(("print",) + args)
        if fail:
            raise KeyError("print")

    class GradMode:
        def __init__(self, on):
            log.append(("grad", on))

        def __enter__(self):
            log.append(("enter",))

        def __exit__(self, *exc):
            log.append(("exit",) + exc)

    g = {"__builtins__": builtins,
         "__import_torch": types.SimpleNamespace(set_grad_enabled=GradMode),
         "__import_torch_dot__dynamo_dot_utils": types.SimpleNamespace(
             record_pregraph_bytecode_enter=recorder("pregraph enter", "token"),
             record_pregraph_bytecode_exit=recorder("pregraph exit"))}
    for name in code.co_names:
        if name.startswith("__compiled_fn_"):
            g[name] = recorder("graph", ("h", "g"))
        elif name.startswith("__resume_at_"):
            g[name] = recorder("resume", "resumed")
        elif name.startswith("__builtins_dict_"):
            g[name] = {"print": printer}
    return g


def outcome(fn, log):
    """What fn("x") returns or raises, and what it did."""
    del log[:]
    try:
        result = fn("x")
    except Exception as exc:  # the body's exception, after the with's exit
        result = (type(exc), exc.args)
    return result, list(log)


@pytest.mark.skipif(not BREAKS, reason="no Dynamo bytecode kept for Python %d.%d" % sys.version_info[:2])
@pytest.mark.parametrize("fail", [False, True], ids=["returns", "raises"])
@pytest.mark.parametrize("path", BREAKS, ids=[os.path.basename(p) for p in BREAKS])
def test_dynamo_code_decompiled_does_what_it_does(path, fail):
    with open(path, "rb") as f:
        code = marshal.load(f)
    log = []
    g = stand_ins(code, log, fail)
    expected = outcome(types.FunctionType(code, g), log)
    assert expected[1][-1][0] == ("exit" if fail else "resume"), expected
    for options in ({"stable_globals": True}, {"force_fallback": True}):
        source = _core.decompile(code, **options)
        exec(compile(source, "<decompiled>", "exec"), g)
        assert outcome(g[code.co_name], log) == expected, (options, source)


# The same shape hand-assembled for 3.9 and 3.10, whose try/finally layouts agree:
# `a`, the function `b` and its argument `c` stay on the stack across the
# SETUP_FINALLY, and the body's call consumes `b` and `c` from below it.
CARRIED_TRY_FINALLY = [
    ("LOAD_FAST", "a"), ("LOAD_FAST", "b"), ("LOAD_FAST", "c"),
    ("LOAD_FAST", "log"), ("LOAD_METHOD", "append"), ("LOAD_CONST", "enter"), ("CALL_METHOD", 1), ("POP_TOP", 0),
    ("SETUP_FINALLY", "handler"),
    ("NOP", 0),
    ("CALL_FUNCTION", 1),
    ("POP_BLOCK", 0),
    ("LOAD_FAST", "log"), ("LOAD_METHOD", "append"), ("LOAD_CONST", "exit"), ("CALL_METHOD", 1), ("POP_TOP", 0),
    ("JUMP_FORWARD", "after"),
    "handler",
    ("LOAD_FAST", "log"), ("LOAD_METHOD", "append"), ("LOAD_CONST", "exit"), ("CALL_METHOD", 1), ("POP_TOP", 0),
    ("RERAISE", 0),
    "after",
    ("BUILD_TUPLE", 2),
    ("RETURN_VALUE", 0),
]


def assemble_legacy(template, items):
    """`template`'s code with the body `items` ((opname, arg) or a label), for 3.9/3.10:
    two bytes an instruction, jump arguments in bytes (3.9) or instructions (3.10)."""
    code = template.__code__
    unit = 1 if sys.version_info[:2] == (3, 9) else 2
    labels, at = {}, 0
    for item in items:
        if isinstance(item, str):
            labels[item] = at
        else:
            at += 2
    consts, names, out = [None], [], bytearray()
    for item in items:
        if isinstance(item, str):
            continue
        name, arg = item
        op = dis.opmap[name]
        if name == "LOAD_FAST":
            arg = code.co_varnames.index(arg)
        elif name in ("LOAD_CONST", "LOAD_METHOD"):
            table = consts if name == "LOAD_CONST" else names
            if arg not in table:
                table.append(arg)
            arg = table.index(arg)
        elif op in dis.hasjrel:
            arg = (labels[arg] - len(out) - 2) // unit
        out += bytes([op, arg])
    lines = {"co_lnotab": b""} if unit == 1 else {"co_linetable": b""}
    return code.replace(co_code=bytes(out), co_consts=tuple(consts), co_names=tuple(names), co_stacksize=16,
                        **lines)


@pytest.mark.skipif(sys.version_info[:2] not in ((3, 9), (3, 10)), reason="3.9/3.10 block-stack bytecode")
def test_legacy_try_finally_entered_with_values_on_the_stack():
    def template(a, b, c, log):
        pass

    code = assemble_legacy(template, CARRIED_TRY_FINALLY)

    def fails(v):
        raise KeyError(v)

    def outcomes(fn):
        runs = []
        for b in (str, fails):
            log = []
            try:
                runs.append((fn(1, b, "c", log), log))
            except KeyError as exc:
                runs.append((exc.args, log))
        return runs

    expected = outcomes(types.FunctionType(code, {}))
    assert expected == [((1, "c"), ["enter", "exit"]), (("c",), ["enter", "exit"])]
    before = _core.validation_stats()
    source = _core.decompile(code)
    assert _core.validation_stats()["validated"] == before["validated"] + 1, source
    assert any(isinstance(n, ast.Try) and n.finalbody for n in ast.walk(ast.parse(source))), source
    for text in (source, _core.decompile(code, force_fallback=True)):
        scope = {}
        exec(compile(text, "<decompiled>", "exec"), scope)
        assert outcomes(scope["template"]) == expected, text


@pytest.mark.skipif(sys.version_info[:2] not in ((3, 9), (3, 10)), reason="3.9/3.10 block-stack bytecode")
def test_checker_unwinds_from_the_stack_a_raising_instruction_leaves():
    """CPython unwinds to a block's level from what the raising instruction left:
    the checker knows that stack after a call (its NULL result on top of what is
    below its operands), and says it cannot check where it does not know it."""
    def template(a, b, c, log):
        pass

    call = assemble_legacy(template, CARRIED_TRY_FINALLY)
    add = assemble_legacy(template, [("BINARY_ADD", 0) if item == ("CALL_FUNCTION", 1) else item
                                     for item in CARRIED_TRY_FINALLY])
    assert _core.equivalent(call, call) == (True, "")
    verdict, why = _core.equivalent(add, add)
    assert verdict is None and "below its block's level" in why, why


def test_a_value_stored_twice_and_used_again_is_evaluated_once():
    """`COPY 1; STORE b; COPY 1; STORE a` with the value going on into a call: torch <= 2.7
    reaches a module's parameters so, and Python compiles nested walruses so."""
    namespace = {}
    exec("def f(self, g):\n    return g((a := (b := self.modules)), 'tok'), a, b\n", namespace)
    f = namespace["f"]

    class Module:
        reads = 0

        @property
        def modules(self):
            Module.reads += 1
            return {"tok": Module.reads}

    before = _core.validation_stats()
    source = _core.decompile(f.__code__)
    assert "state machine" not in source, source
    assert _core.validation_stats()["validated"] == before["validated"] + 1, source
    decompiled = {}
    exec(source, decompiled)
    results = []
    for fn in (f, decompiled["f"]):
        Module.reads = 0
        results.append((fn(Module(), lambda d, key: d[key]), Module.reads))
    assert results[0] == results[1] == ((1, {"tok": 1}, {"tok": 1}), 1), (results, source)


def with_closure_from_argument(fn, argument):
    """`fn`'s code where the closure of the function it makes is the local `argument` instead
    of the tuple of its cells (3.11+: the loads of the n cells and BUILD_TUPLE n before the
    code constant become LOAD_FAST `argument` and NOPs)."""
    code = fn.__code__
    ins = list(dis.get_instructions(code))
    at = next(k for k, i in enumerate(ins) if i.opname == "LOAD_CONST" and isinstance(i.argval, types.CodeType))
    build = ins[at - 1]
    cells = ins[at - 1 - build.arg:at - 1]
    assert build.opname == "BUILD_TUPLE" and all(i.opname in ("LOAD_CLOSURE", "LOAD_FAST") for i in cells), ins
    raw = bytearray(code.co_code)
    for k, i in enumerate(cells + [build]):
        raw[i.offset:i.offset + 2] = bytes([dis.opmap["LOAD_FAST"], code.co_varnames.index(argument)] if k == 0
                                           else [dis.opmap["NOP"], 0])
    return code.replace(co_code=bytes(raw))


@pytest.mark.skipif(sys.version_info < (3, 11), reason="3.11+: the function type takes the name from the code")
def test_a_function_made_with_a_closure_other_than_its_cells():
    """torch 2.7-2.11 make a resume function with MAKE_FUNCTION from a closure tuple it
    passed through lists: no `def` or `lambda` says that, so the function is made by
    calling the function type with the same code object, globals and closure."""
    def make():
        offset, scale = 10, 20

        def maker(cells):
            def resume(y):
                """Doc of the resume function."""
                return y * scale + offset
            return resume, resume(1)
        return maker

    maker = make()
    code = with_closure_from_argument(maker, "cells")
    free = code.co_consts[[isinstance(c, types.CodeType) for c in code.co_consts].index(True)].co_freevars
    cells = tuple(types.CellType(v) for v in (3, 100))  # resume's free variables, in order
    value = dict(zip(free, (3, 100)))
    original = types.FunctionType(code, {"__name__": "m"}, closure=maker.__closure__)

    def outcome(fn):
        made, first = fn(cells)
        return (first, made(2), made.__name__, made.__qualname__, made.__doc__, made.__module__,
                [c.cell_contents for c in made.__closure__])

    expected = outcome(original)
    assert expected[:2] == (value["scale"] + value["offset"], 2 * value["scale"] + value["offset"]), expected
    for options in ({}, {"force_fallback": True}):
        source, _lines, named = _core.decompile(code, named=True, linemap=True, **options)
        assert ".__class__(" in source, source
        scope = {"__name__": "m"}
        scope.update(("_depyf_const_%d" % k, obj) for k, obj in enumerate(named))
        exec(compile("def make():\n    offset = scale = None\n" + "".join(
            "    " + line + "\n" for line in source.splitlines()) + "    return maker\n", "<decompiled>", "exec"),
             scope)
        assert outcome(scope["make"]()) == expected, (options, source)


def called_where_made(fn, name):
    """`fn`'s code where the function it stores in local `name` and then calls is called right
    where it is made (torch <= 2.6 calls a resume function so): the store and the load of
    `name` go, the NULL of the call moves below the function (3.11/3.12: PUSH_NULL and
    SWAP 2; 3.13 pushes it after the callable), and the local is renamed."""
    code = fn.__code__
    ins = list(dis.get_instructions(code))
    store = next(i for i in ins if i.opname == "STORE_FAST" and i.argval == name)
    load = next(i for i in ins if i.opname == "LOAD_FAST" and i.argval == name)
    raw = bytearray(code.co_code)

    def put(at, opname, arg=0):
        raw[at:at + 2] = bytes([dis.opmap[opname], arg])
    if sys.version_info >= (3, 13):
        put(store.offset, "NOP")
    else:
        null = ins[ins.index(load) - 1]
        assert null.opname == "PUSH_NULL", ins
        put(store.offset, "PUSH_NULL")
        put(null.offset, "SWAP", 2)
    put(load.offset, "NOP")
    # (the slot stays, renamed: as in Dynamo's code, no local has the function's name)
    varnames = tuple(v + "_slot" if v == name else v for v in code.co_varnames)
    return code.replace(co_code=bytes(raw), co_varnames=varnames)


@pytest.mark.skipif(sys.version_info < (3, 11), reason="3.11+: the function type takes the name from the code")
def test_a_function_called_where_it_is_made():
    """No `def` makes a function that is used without being bound to a name: it is made by
    calling the function type on the same code object (a def would compile another one,
    and bind a local the code does not have)."""
    def make():
        offset, scale = 10, 20

        def maker():
            def resume(y):
                return y * scale + offset
            unused = 2
            return resume(1)
        return maker

    maker = make()
    code = called_where_made(maker, "resume")
    original = types.FunctionType(code, {"__name__": "m"}, closure=maker.__closure__)
    assert original() == 30
    dynamo = {"stable_globals": True}  # (Dynamo's code: the code object is kept, no local is added)
    for options in ({"validate": False}, dynamo, dict(dynamo, force_fallback=True), {"force_fallback": True}):
        source, _lines, named = _core.decompile(code, named=True, linemap=True, **options)
        if options.get("stable_globals") or not options.get("force_fallback"):
            assert ".__class__(" in source and "def resume" not in source, (options, source)
        else:  # elsewhere the state machine shows the function's source
            assert "def resume" in source, source
        scope = {"__name__": "m"}
        scope.update(("_depyf_const_%d" % k, obj) for k, obj in enumerate(named))
        exec(compile("def make():\n    offset, scale = 10, 20\n" + "".join(
            "    " + line + "\n" for line in source.splitlines()) + "    return maker\n", "<decompiled>", "exec"),
             scope)
        assert scope["make"]()() == 30, (options, source)
        if options.get("stable_globals"):
            assert "resume" not in scope["make"]().__code__.co_varnames, source  # no local of its name


@pytest.mark.skipif(sys.version_info < (3, 11), reason="3.11+: the function type takes the name from the code")
def test_the_call_of_the_function_type_is_checked_as_the_function_it_makes():
    """Translation validation reads `(lambda: 0).__class__(code, (lambda: 0).__globals__,
    None, defaults, closure)` as the MAKE_FUNCTION it stands for (torch 2.6-2.11's resume
    functions of closures then print structured and checked, not as a state machine),
    and refutes the call when any part of it differs from what MAKE_FUNCTION takes."""
    def make():
        offset, scale = 10, 20

        def maker():
            def resume(y):
                return y * scale + offset
            unused = 2
            return resume(1)
        return maker

    code = called_where_made(make(), "resume")
    before = _core.validation_stats()
    source, _lines, named = _core.decompile(code, named=True, linemap=True, stable_globals=True)
    assert _core.validation_stats()["validated"] == before["validated"] + 1, source
    assert "state machine" not in source and ".__class__(" in source, source
    cells = "((lambda: offset).__closure__[0], (lambda: scale).__closure__[0])"
    assert cells in source, source

    def checked(text):
        scope = "def make():\n    offset, scale = 10, 20\n" + "".join(
            "    " + line + "\n" for line in text.splitlines()) + "    return maker\n"
        outer = compile(scope, "<decompiled>", "exec").co_consts[0]
        [candidate] = [c for c in outer.co_consts if isinstance(c, types.CodeType) and c.co_name == "maker"]
        return _core.equivalent(code, candidate, stable_globals=True, named=tuple(named))

    assert checked(source)[0] is True, checked(source)
    wrong = {
        "closure in another order": source.replace(
            cells, "((lambda: scale).__closure__[0], (lambda: offset).__closure__[0])"),
        "defaults": source.replace(", None, None, (", ", None, (5,), ("),
        "a name": source.replace("__globals__, None,", "__globals__, 'other',"),
        "other globals": source.replace("(lambda: 0).__globals__", "{}"),
        "another callable": source.replace("(lambda: 0).__class__(", "(lambda: 0).__call__.__class__("),
    }
    for what, text in wrong.items():
        assert text != source, what
        verdict = checked(text)
        assert verdict[0] is False, (what, verdict, text)


@pytest.mark.skipif(sys.version_info < (3, 11), reason="3.11+: the function type takes the name from the code")
def test_a_function_made_before_the_statements_that_precede_its_call():
    """torch 2.9-2.11 make a resume function, then rearrange the lists it is called with:
    the function made as a value is printed where the bytecode makes it (a temporary),
    not moved into the call after those statements, so the output is checked."""
    def make():
        offset, scale = 10, 20

        def maker(values):
            def resume(y):
                return y * scale + offset
            v = values.pop()
            return resume(v)
        return maker

    code = called_where_made(make(), "resume")
    original = types.FunctionType(code, {"__name__": "m"}, closure=make().__closure__)
    assert original([1, 2]) == 2 * 20 + 10
    before = _core.validation_stats()
    source, _lines, named = _core.decompile(code, named=True, linemap=True, stable_globals=True)
    assert _core.validation_stats()["validated"] == before["validated"] + 1, source
    assert "state machine" not in source, source
    assert source.index(".__class__(") < source.index(".pop()"), source  # made first, as the bytecode does
    scope = {"__name__": "m"}
    scope.update(("_depyf_const_%d" % k, obj) for k, obj in enumerate(named))
    exec(compile("def make():\n    offset, scale = 10, 20\n" + "".join(
        "    " + line + "\n" for line in source.splitlines()) + "    return maker\n", "<decompiled>", "exec"), scope)
    values = [1, 3]
    assert scope["make"]()(values) == 3 * 20 + 10 and values == [1], source
