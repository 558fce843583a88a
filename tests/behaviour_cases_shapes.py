"""Behaviour cases for source shapes that once decompiled to the
state-machine fallback, or to a statement of another form, although a
structured form exists: asserts of every kind, lambdas as call arguments
(3.13), returns inside try and with, async with in async generators.
Imported by behaviour_cases.py, whose CASES they join; tests/test_source_shapes.py
checks that none of them needs the fallback."""
from behaviour_cases import Ctx, case


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
