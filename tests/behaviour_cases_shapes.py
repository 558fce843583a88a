"""Behaviour cases for source shapes that once decompiled to the
state-machine fallback, or to a statement of another form, although a
structured form exists: asserts of every kind, lambdas as call arguments
(3.13), returns inside try and with, async with in async generators.
Imported by behaviour_cases.py, whose CASES they join; tests/test_source_shapes.py
checks that none of them needs the fallback."""
import asyncio

from behaviour_cases import Box, Ctx, case


# --- assert ---------------------------------------------------------------------------

@case((1, 2, 3), (0, 2, 3), (1, 0, 3), (3, 2, 1), (None, 1, 2), (1, 1, 1))
def assert_conditions(x, y, z):
    assert x is not None
    assert x and y, "both"
    assert x or y
    assert not x or y, f"bad {x!r} {y}"
    assert x < y < z, "chain"
    assert 0 <= x <= 10
    assert x in (1, 2, 3) and y not in (4,), [x, y]
    return x + y + z


@case(([1, 2, 3],), ([1, -2],), ([],), ([3, 3],))
def assert_in_loops(xs):
    for x in xs:
        assert x > 0, x
    n = 0
    while xs:
        xs = xs[1:]
        n += 1
        assert xs != [3]
    for x in range(n):
        if x:
            assert x < 5
    return n


@case((0,), (1,), (2,), (None,), (7,))
def assert_ending_branches(x):
    if x:
        assert x > 1
    else:
        assert x is None or x == 0, "n"
    try:
        assert x != 2, "t"
        y = 1
    except KeyError:
        y = 2
    return y


@case((0,), (1,), (5,))
def assert_false_and_walrus(x):
    if x == 5:
        assert False, "never %d" % x
    assert (y := x + 1) > 1
    return y


@case(([],), ([1],), ([1, 2],))
def assert_in_with_and_for_else(xs):
    log = []
    with Ctx(log, "m"):
        assert len(xs) < 2, "long"
    for x in xs:
        assert x
    else:
        assert xs, "empty"
    return log


# --- chained comparisons as conditions (3.8-3.10 DUP_TOP/ROT_THREE, 3.12+ copies) ---------

@case((1, 2, 3), (3, 2, 1), (0, 5, 5), (2, 2, 9))
def chained_comparison_conditions(x, y, z):
    out = []
    if x < y < z:
        out.append("up")
    if not (x <= y <= z):
        out.append("not up")
    for t in (x, y, z):
        if x < t < z:
            continue
        out.append(t)
    out.append([t for t in (x, y, z, 4) if z > t >= x])
    if 0 < x < 3:
        return out, "small"
    return out, "other"


# --- lambdas as arguments (3.13 keeps the function on the stack for its defaults) -------

@case(([3, 1, 2], 0), ([], 1), ([(1, 2), (0, 5)], 1))
def lambda_arguments(xs, k):
    if xs and isinstance(xs[0], tuple):
        return max(xs, key=lambda t: t[k], default=None), sorted(xs, key=lambda t, j=k: -t[j])
    return sorted(xs, key=lambda x: -x), [lambda: 1, (lambda: 2)][k]()


# --- return/if inside try, with ---------------------------------------------------------

@case(({"a": 1}, "a"), ({"a": 1}, "b"), ([], "a"), ({}, ""))
def return_inside_if_inside_try(d, k):
    try:
        if k in d:
            return d[k]
    except KeyError:
        pass
    except TypeError:
        return "type"
    try:
        if k:
            return d[k]
    except (KeyError, TypeError):
        pass
    return None


@case(([0, 0],), ([0, 1],), ([],))
def return_in_for_else_in_with(xs):
    log = []
    with Ctx(log, "m"):
        for x in xs:
            if x:
                break
        else:
            return 1, log
    return 2, log


@case(([1, 2],), ([],))
def async_with_inside_an_async_generator(xs):
    import asyncio

    class ACtx:
        def __init__(self, log):
            self.log = log

        async def __aenter__(self):
            self.log.append("enter")
            return len(self.log)

        async def __aexit__(self, *exc):
            self.log.append("exit")

    async def gen(m, xs):
        async with m as v:
            yield v
        for x in xs:
            async with m:
                yield x

    async def drain(log):
        return [v async for v in gen(ACtx(log), xs)]

    log = []
    return asyncio.run(drain(log)), log


# --- structured forms the validator once refused although correct -----------------

@case((1, "a"), (0, ""), (None, "b"))
def dict_display_of_more_than_15_items(x, s):
    # 3.9+ builds it with BUILD_MAP 0 and one MAP_ADD per item (printed as
    # stores into a temporary, which the validator refuses)
    d = {"k0": x, "k1": s, "k2": None, "k3": False, "k4": bool(x), "k5": s.upper(), "k6": 6, "k7": [x],
         "k8": {"in": x}, "k9": 9, "k10": 10, "k11": 11, "k12": 12, "k13": 13, "k14": 14, "k15": 15,
         "k16": (x, s)}
    kw = dict(**d, a0=0, a1=1, a2=2, a3=3, a4=4, a5=5, a6=6, a7=7, a8=8, a9=9, a10=10, a11=11, a12=12, a13=13,
              a14=14, a15=15, a16=x)
    return sorted(d.items(), key=repr), sorted(kw.items(), key=repr)


@case((0, [1, 2]), (3, [1, 2, 3, 4]), (1, []))
def constant_in_a_local_and_on_the_stack(n, xs):
    # `a` holds the constant 0 where the loop test reads a global (a sync
    # point of the validator) with 0 on the stack too
    a = b = 0
    while a < len(xs):
        a += 1
    return a < len(xs), a, b, n


@case(("on",), ("no",), ("x",), (True,))
def membership_in_set_constants(v):
    if v in {False, True}:
        return bool(v)
    if v in {"yes", "y", "on", "1", "true", "t"}:
        return True
    if v in {"off", "no", "f", "n", "false", "0"}:
        return False
    return None


@case((None, 1, 0, None, 1, 0, None, 1), (1, 1, 1, 1, 1, 1, 1, 1), (None,) * 8)
def run_of_ifs_with_conditional_formats(a, b, c, d, e, f, g, h):
    bits = []
    if a is not None:
        bits.append(f"[{1 if a else 22}m")
    if b is not None:
        bits.append(f"[{2 if b else 22}m")
    if c is not None:
        bits.append(f"[{4 if c else 24}m")
    if d is not None:
        bits.append(f"[{53 if d else 55}m")
    if e is not None:
        bits.append(f"[{3 if e else 23}m")
    if f is not None:
        bits.append(f"[{5 if f else 25}m")
    if g is not None:
        bits.append(f"[{7 if g else 27}m")
    if h is not None:
        bits.append(f"[{9 if h else 29}m")
    return "".join(bits)


@case((0,), (1,))
def await_in_try_then_return(n):
    # 3.12+: the await's cold throw path (CLEANUP_THROW), protected by the
    # try's handler, lies after the return: the return was read into the
    # try body, where the handler would catch what make() raises
    log = []

    class S:
        async def connect(self):
            log.append("connect")

        def close(self):
            log.append("close")

    def make(s):
        if n:
            raise ValueError("make")
        return "ok"

    async def f(s):
        try:
            await s.connect()
        except BaseException:
            s.close()
            raise
        return make(s)

    try:
        return asyncio.run(f(S())), log
    except ValueError as e:
        return str(e), log


# --- a conditional expression as the argument of a returned call ----------------------
# (3.10+ copies `CALL; RETURN_VALUE` into both arms: the callable is loaded
# before the test, so `if c: return str(a)` would read it after)

@case((1, 2, True), (1, 2, False), ("x", None, 0), ([], (), []))
def conditional_argument_of_a_returned_call(a, b, c):
    return str(a if c else b)


@case(([1, 2, 2], 2, True), ([1, 2, 2], 2, False), ([], 0, 1))
def conditional_argument_of_a_returned_method_call(xs, a, c):
    return xs.count(a if c else len(xs))


@case((1, 2, True), (1, 2, False))
def conditional_argument_after_its_callable_was_fetched(a, b, c):
    log = []

    class K:
        @property
        def f(self):
            log.append("f")
            return lambda v: (v, log)

    def test():
        log.append("test")
        return c

    return K().f(a if test() else b)


# --- a bool op inside another, written over several lines ------------------------------
# (an inner operand's jump lands on the outer bool op's test of the same value:
# CPython threads it when both are on one line, 3.10 and 3.11 leave the chain
# when they are not)

_TRUTHS = [(a, b, c, d) for a in (0, 2, "") for b in ("", 3, None) for c in (0, "c") for d in (None, 5)]


@case(*_TRUTHS)
def bool_chains_returned(a, b, c, d):
    and_in_or = (a
                 and (b and not c)
                 or d)
    or_in_and = ((a
                  or (b or c))
                 and d)
    and_in_and = ((a
                   or (b and c))
                  and d)
    or_in_or = ((a
                 and (b or c))
                or d)
    return and_in_or, or_in_and, and_in_and, or_in_or


@case(*_TRUTHS)
def bool_chain_as_return_value(a, b, c, d):
    return (a
            and (b and not c)
            or d)


@case(*_TRUTHS)
def bool_chains_in_conditions(a, b, c, d):
    log = []
    if (a
            and (b and not c)
            or d) == 5:
        log.append("if")
    n = 0
    while bool(n < 2
               and (b or c)
               or (n < 1
                   and (a or d))):
        n += 1
    log.append(n)
    assert (a
            or (b and c)
            or (d
                and (a or c))), "no"
    return log


@case(*_TRUTHS)
def bool_chains_as_arguments(a, b, c, d):
    box = Box(v=a)
    box.v = (box.v
             or (b or c)
             and d)
    box.v += len(str(box.v
                     and (b and c)
                     or d))
    return [str(a
                and (b and c)
                or d), (a
                        or (b or c)
                        and d), box]


@case(*_TRUTHS)
def bool_chains_in_lambdas_and_comprehensions(a, b, c, d):
    pick = lambda x: (x
                      and (b and not c)
                      or -1)
    firsts = [(x
               and (b
                    and (c or d))
               or x) for x in (a, b, c, d)]
    either = (a
              and (b and c)
              or d) if c else (b
                               or (c or d)
                               and a)
    return pick(a), firsts, either
