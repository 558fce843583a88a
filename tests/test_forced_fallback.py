"""The state-machine fallback (fallback.c) on ordinary code, under every
interpreter: each behaviour case, printed as a state machine
(`force_fallback=True`), must still behave like the original on every input.
The cases below add the ways out of a `finally` or `with` block (return,
break, continue, an exception raised, swallowed or replaced there), which
CPython 3.8 runs with its own instructions (BEGIN_FINALLY, CALL_FINALLY,
END_FINALLY, POP_FINALLY, WITH_CLEANUP_*)."""
import sys

import pytest

import behaviour_cases
import test_behaviour
from depyf import _core

FINALLY_CASES = []


def case(*inputs):
    def register(fn):
        FINALLY_CASES.append((fn, [tuple(args) for args in inputs]))
        return fn
    return register


class Exit:
    """A context manager that logs its calls and swallows exceptions if told."""

    def __init__(self, log, swallow):
        self.log, self.swallow = log, swallow

    def __enter__(self):
        self.log.append("enter")
        return self

    def __exit__(self, tp, value, tb):
        self.log.append(("exit", tp.__name__ if tp else None))
        return self.swallow


@case((0,), (1,), (2,))
def return_in_finally_drops_the_exception(x):
    log = []
    try:
        if x == 1:
            raise ValueError(x)
        if x == 2:
            return "body"
        log.append("fell")
    finally:
        log.append("finally")
        return log


@case(([1, 2, 3, 4],), ([],), ([5, 0, 7],))
def break_and_continue_in_finally(items):
    log = []
    for i in items:
        try:
            if i == 0:
                raise ZeroDivisionError
            log.append(10 // i)
        finally:
            if i == 2:
                continue
            if i == 0:
                break  # drops the ZeroDivisionError
            log.append(-i)
    return log


@case((0,), (1,), (2,), (3,))
def returns_through_nested_finally_blocks(x):
    log = []
    try:
        try:
            if x == 1:
                return "inner"
            if x == 2:
                raise KeyError
        finally:
            log.append("a")
            if x == 3:
                return "from a"
        log.append("after inner")
    finally:
        log.append("b")
    return log


@case(([0, 1, 2, 3],), ([3, 3],))
def with_swallowing_in_a_loop(items):
    log = []
    for i in items:
        with Exit(log, i % 2 == 1):
            if i == 0:
                continue
            if i == 1:
                raise ValueError
            if i == 2:
                break
            log.append(i)
    return log


@case((0,), (1,), (2,))
def return_and_raise_in_nested_with(x):
    log = []
    with Exit(log, False):
        with Exit(log, x == 2):
            if x == 0:
                return log
            raise TypeError
    log.append("after")
    return log


@case((0,), (1,), (2,))
def return_continue_break_in_except_as(x):
    log = []
    for i in range(3):
        try:
            if i == x:
                raise ValueError(i)
            log.append(i)
        except ValueError as e:
            if x == 0:
                return str(e)
            if x == 1:
                continue
            break
    return log


@case((0,), (1,))
def exc_info_inside_finally(x):
    log = []
    try:
        try:
            if x:
                raise LookupError
        finally:
            log.append(sys.exc_info()[0] is not None)
    except LookupError:
        log.append("caught")
    return log


@case((0,), (1,), (2,))
def raise_in_finally_replaces_the_exception(x):
    log = []
    try:
        try:
            if x == 1:
                raise ValueError
        finally:
            log.append("f")
            if x == 2:
                raise KeyError
    except Exception as e:
        log.append(type(e).__name__)
    return log


@case((0,), (1,), (2,))
def finally_changes_the_returned_list(x):
    v = [x]
    try:
        if x == 2:
            raise IndexError
        return v
    finally:
        v.append("f")
        if x == 1:
            v.append("x")


@case((0,), (1,))
def bare_raise_in_finally_inside_a_handler(x):
    log = []
    try:
        try:
            raise ValueError(x)
        except ValueError:
            try:
                log.append("h")
            finally:
                log.append("f")
                if x:
                    raise
    except ValueError:
        log.append("again")
    return log


ALL_CASES = behaviour_cases.CASES + FINALLY_CASES


@pytest.mark.parametrize("fn, inputs", ALL_CASES, ids=[fn.__name__ for fn, _ in ALL_CASES])
def test_forced_fallback_behaves_like_the_original(fn, inputs):
    text = _core.decompile(fn.__code__, force_fallback=True)
    scope = {}
    exec(compile(text, "<fallback %s>" % fn.__name__, "exec"), fn.__globals__, scope)
    new = scope[fn.__name__]
    for args in inputs:
        want, got = test_behaviour.outcome(fn, args), test_behaviour.outcome(new, args)
        assert got == want, "on input %r:\nwant %r\ngot  %r\nstate machine:\n%s" % (args, want, got, text)


def test_the_option_really_forces_the_state_machine():
    def plain(a):
        return a + 1

    assert "__state" not in _core.decompile(plain.__code__)
    assert "__state" in _core.decompile(plain.__code__, force_fallback=True)


def _generator_of_inverses(it):
    for x in it:
        try:
            yield 1 // x
        except ZeroDivisionError:
            yield -1


def _list_of_genexpr(xs):
    return list(x for x in xs)


def test_a_comprehension_without_expression_form_becomes_a_def():
    """Bytecode no compiler wrote: a generator's code in the place of a
    generator expression's.  No comprehension reads like it, so the
    function's state machine defines it under a fresh name and calls it with
    the iterator, instead of refusing the whole function."""
    import types
    outer = _list_of_genexpr.__code__
    genexpr = next(c for c in outer.co_consts if isinstance(c, types.CodeType))
    body = _generator_of_inverses.__code__
    names = {"co_qualname": genexpr.co_qualname} if sys.version_info >= (3, 11) else {}
    impostor = body.replace(co_name=genexpr.co_name, co_varnames=(".0",) + body.co_varnames[1:], **names)
    code = outer.replace(co_consts=tuple(impostor if c is genexpr else c for c in outer.co_consts))
    original = types.FunctionType(code, {"__builtins__": __builtins__})
    source = _core.decompile(code)
    assert "def __fn" in source and "(__iter)" in source, source
    ns = {}
    exec(compile(source, "<decompiled>", "exec"), ns)
    for xs in ([1, 0, 2], [], [0, 0]):
        assert ns[code.co_name](xs) == original(xs)


def _sums_of_nested_genexprs(n):
    # (`if False` leaves the middle generator expression with no yield: the state
    # machine defines it first, and keeps the outer one in a variable meanwhile)
    return sum(x for x in (y for y in (z for z in range(n) if True) if False) if True), list(range(n))


@pytest.mark.skipif(sys.version_info < (3, 11), reason="a function is made from its code object on 3.11+ only")
def test_a_generator_expression_spilled_by_the_state_machine_is_made_from_its_code():
    """A generator expression's value that the state machine must keep in a
    variable has no def form (`<genexpr>` is no name): it is the call of the
    function type on its code object, named as a constant (not a failure)."""
    from depyf import _decompiled
    fn = _sums_of_nested_genexprs
    text, linemap, named = _core.decompile(fn.__code__, force_fallback=True, linemap=True, named=True)
    scope = dict(fn.__globals__)
    bound = _decompiled.bind_named(text, named, scope)
    assert bound is not None, text
    text, bindings = bound
    scope.update(bindings)
    exec(compile(text, "<fallback>", "exec"), scope)
    for n in (0, 1, 5):
        assert scope[fn.__name__](n) == fn(n)
