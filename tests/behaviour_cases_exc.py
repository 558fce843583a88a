"""Behaviour cases for exception-handling shapes (try/except/finally, with)
that once decompiled to the state-machine fallback on 3.11-3.13 although a
structured form exists (issue 11, found on third-party packages).  Imported
by behaviour_cases.py, whose CASES they join; tests/test_exc_shapes.py checks
that none of them needs the fallback (nor fails validation)."""
import asyncio

from behaviour_cases import AsyncCtx, Ctx, case, double_later


def _step(log, x):
    """Logs x; raises the exception x names, if any."""
    log.append(x)
    if x == "value":
        raise ValueError(x)
    if x == "key":
        raise KeyError(x)
    return x


# --- a try whose except clause returns, then `if c: return <const>` (3.12+:
# the clause's `return None` was taken for a copy of the code after the try,
# and the if's branch for where the clauses join) ------------------------------

@case(("7",), ("-3",), ("x",), (None,))
def except_returns_then_guarded_return(value):
    try:
        seconds = int(value)
    except (ValueError, TypeError):
        return None
    if seconds < 0:
        return None
    return seconds * 2


@case(("7",), ("-3",), ("x",), ("0",), ("",))
def except_returns_then_guard_then_another_try(value):
    if not value:
        return "empty"
    try:
        seconds = int(value)
    except ValueError:
        return None
    if seconds < 0:
        return None
    try:
        return 10 // seconds
    except ZeroDivisionError:
        return None


# --- a while loop ending a try body (3.12+: its jump back, after the bottom
# copy of the test, is left out of the exception table) -----------------------

@case(([1, 2],), ([],), ([1, "key"],), ([1, "value", 3],))
def while_loop_ending_a_try_body(xs):
    out = []
    xs = list(xs)
    try:
        out.append(len(xs))
        while xs and xs[0] != 3:
            out.append(_step(out, xs.pop(0)))
    except KeyError as exc:
        out.append(repr(exc))
    except ValueError:
        return out, "value"
    return out


@case(([1, 2],), ([],), ([1, "key"],))
def while_loop_as_the_whole_try_body(xs):
    out = []
    xs = list(xs)
    try:
        while xs:
            _step(out, xs.pop())
    except KeyError:
        raise LookupError("again") from None
    return out


# --- an if/else in an except clause whose else returns (3.11: the return's
# POP_EXCEPT was taken from the stack the then-part goes on with) -------------

@case((["a"], [1]), ([], [1]), (["eof"], []), (["eof"], [1, 2]), (["key"], [1]))
def except_clause_if_else_returning(xs, out):
    out = list(out)
    u = "none"
    try:
        u = _step(out, xs.pop(0) if xs else "eof")
        if u == "eof":
            raise EOFError(u)
    except EOFError:
        if out:
            out.append("short")
        else:
            return [], "Body"
    out.append(u)
    return out


# --- a with whose body returns, ending a loop body (3.12+: an exception
# __exit__ suppresses goes on at the loop's head, from the cold handler) -----

@case((["value", 2], True, []), ([1], False, []), (["value", "value"], True, []), ([], True, []),
      (["key"], False, []))
def first_decoded_with_suppress(xs, suppress, log):
    for x in xs:
        with Ctx(log, "c", suppress):
            return _step(log, x)
    return "none"


# --- try/except/else as the whole body of a while loop (3.12+: the except
# clause's jump back to the loop head is cold code after the handler) ---------

@case((["value", "value", 1],), (["key"],), ([2],), (["value", "key"],))
def retry_loop_with_else_return(xs):
    log = []
    xs = list(xs)
    while True:
        try:
            x = _step(log, xs.pop(0))
        except ValueError:
            log.append("again")
        except BaseException:
            log.append("give up")
            raise
        else:
            return x, log


@case((["value", "value", 1],), (["key"],), ([2],), ([],))
async def async_retry_loop_with_else_return(xs):
    log = []
    xs = list(xs)
    while True:
        try:
            x = _step(log, xs.pop(0))
        except ValueError:
            await asyncio.sleep(0)
            log.append("again")
        except BaseException:
            log.append("give up")
            raise
        else:
            return x, log


# --- an if branch ending in a try/except whose clause jumps back to the code
# after the if (3.12+: past the else branch placed between) -----------------

@case((1, 1), (1, "value"), (0, 1), (1, "key"))
def try_in_if_branch_joining_after_the_else(p, x):
    log = []
    if p:
        h = 1
        try:
            _step(log, x)
        except ValueError:
            h = None
    else:
        h = 2
    log.append(h)
    return log


# --- return inside a try whose finally body branches (3.12+: each branch of
# the finally copy ends in its own copy of RETURN_VALUE) ----------------------

@case((1, None), (1, 2), ("value", 2), ("key", 3), ("value", None))
def return_in_try_with_a_branching_finally(x, h):
    log = []
    try:
        return _step(log, x), log
    finally:
        if h is not None and h > 1:
            log.append("cleanup")


@case((1, None), (1, 2), ("value", 2), ("key", 3), ("value", None))
def return_in_try_except_with_a_branching_finally(x, h):
    log = []
    try:
        return _step(log, x), log
    except KeyError:
        log.append("key")
        raise
    finally:
        if h is not None:
            log.append("cleanup")


@case((1, None, 1), (0, 2, "value"), (1, 2, "value"), (1, 2, "key"), (0, None, 1))
def try_except_finally_after_an_if_with_a_try(p, h, x):
    log = []
    if p:
        h = 1
        try:
            _step(log, x)
        except ValueError:
            h = None
    else:
        h = None
    log.append(0)
    try:
        return _step(log, x), log
    except KeyError:
        if len(log) > 2:
            raise KeyboardInterrupt()
        raise
    finally:
        if h is not None and h > 0:
            log.append("cleanup")


# --- coroutines: try statements nested in except and else clauses (3.12+:
# the generator's StopIteration handler covers every instruction, which hid
# where a try body ends) ------------------------------------------------------

async def _astep(log, x):
    await asyncio.sleep(0)
    return _step(log, x)


@case((1, 2, 3), ("value", 2, 3), ("value", "value", 3), (1, "key", 3), (1, 2, "value"), ("key", 1, 1))
async def async_tries_in_except_and_else_clauses(a, b, c):
    log = []
    try:
        _step(log, a)
    except ValueError:
        try:
            await _astep(log, b)
        except BaseException:
            log.append("undo")
            raise
        log.append("added")
    else:
        try:
            await _astep(log, c)
        except BaseException:
            log.append("release")
            raise
    return log


# --- finally bodies whose normal-path copy differs from the handler's by
# NOPs: an if/else ending on a line of its own, an await (3.12+: its
# CLEANUP_THROW is inline in the handler, after the function in the copy) ----

@case((["a"], "value"), (["a"], 1), ([], 1), ([], "key"))
def finally_assigning_in_both_branches(xs, x):
    log = []
    try:
        _step(log, x)
    finally:
        if xs:
            log.append(xs.pop())
            done = True
        else:
            done = False
    if not done:
        log.append("not done")
    return log


@case((1, 2), ("value", 2), (1, "key"), ("key", "value"))
async def await_in_try_and_finally(a, b):
    log = []
    try:
        await _astep(log, a)
    finally:
        await _astep(log, b)
    return log


# --- return from a try inside a with (the return value takes __exit__'s
# place on the stack before the RETURN_VALUE: the try body is not over) ------

@case(([1, 2],), ([],))
def return_in_try_in_with(xs):
    log = []
    with Ctx(log, "c"):
        try:
            return xs.pop(), log
        except IndexError:
            log.append("empty")
    return None, log


@case(([1, 2],), ([],))
def return_in_try_in_with_except_raising(xs):
    log = []
    with Ctx(log, "c", suppress=True):
        try:
            return xs.pop(), log
        except IndexError:
            raise KeyError("empty") from None
    return "suppressed", log


# --- a with whose body never completes: the code after it runs only when
# __exit__ suppresses (3.12+: its only copy is in the cold handler; it was
# once dropped as if it were a copy of code found elsewhere) -----------------

@case(([1],), ([],), (["value"],))
def code_after_a_with_reached_only_by_suppressing(xs):
    log = []
    with Ctx(log, "c", suppress=True):
        if xs:
            return _step(log, xs.pop()), log
        raise KeyError()
    log.append("after")
    return "suppressed", log


@case(([1],), ([],), (["value"],))
async def code_after_an_async_with_reached_only_by_suppressing(xs):
    log = []
    async with AsyncCtx(log, "c", suppress=True):
        if xs:
            return _step(log, xs.pop()), log
        raise KeyError()
    log.append("after")
    return "suppressed", log


# --- an if whose then-part ends with a with returning what can raise: an
# exception __exit__ suppresses goes on after the if, not into its else
# (3.12+: the way on is a copy in the cold handler; the else was dropped, as
# if the then-part never completed) --------------------------------------------

@case((1, True), (1, False), (0, True), ("value", True), ("value", False))
def if_else_whose_then_part_is_a_with_returning(x, suppress):
    # importlib's FileLoader.get_data
    log = []
    if x:
        with Ctx(log, "a", suppress):
            return _step(log, x), log
    else:
        with Ctx(log, "b", suppress):
            return _step(log, "other"), log


@case((1, True), (0, True), (0, False), ("value", True), ("value", False))
def if_elif_else_whose_then_part_is_a_with_returning(x, suppress):
    log = []
    if x:
        with Ctx(log, "a", suppress):
            return _step(log, x), log
    elif suppress:
        return "elif", log
    else:
        return "else", log


@case((1, True), (0, True), ("value", True), ("value", False))
def with_returning_in_a_then_part_then_code(x, suppress):
    log = []
    if x:
        with Ctx(log, "a", suppress):
            return _step(log, x), log
    log.append("after")
    return "end", log


@case((1, True), (0, True), (0, False), ("value", True), ("value", False))
def if_elif_else_joining_whose_then_part_is_a_with_returning_a_constant(x, suppress):
    # (the constant is returned after __exit__: the body falls into the
    # exit call, and the way on from a suppressed exception, `return r` in
    # the cold handler, was read as code after the if)
    r = "none"
    if x:
        with Ctx([], "a", suppress):
            _step([], x)
            return "with"
    elif suppress:
        r = "elif"
    else:
        r = "else"
    return r


# --- a then-part whose with returns a local: the value is loaded before
# __exit__, and a suppressed exception goes on in the cold handler's copy of
# the code after the if (3.12+: read as the with's own way on, past the if)

@case((1, True), (1, False), (0, True), ("value", True), ("value", False))
def then_part_with_returning_a_local_then_code(x, suppress):
    log = []
    if x:
        with Ctx(log, "a", suppress):
            return log
    got = x
    return got


@case((1, True), (0, False), ("value", True), ("value", False))
def then_part_with_returning_none_then_return(x, suppress):
    log = []
    if x:
        with Ctx(log, "a", suppress):
            _step(log, x)
            return None
    return log


# --- a try whose body breaks out of a for loop, then code after the try in
# the loop (3.12+: the except clauses go on in cold code, the rest of the
# loop body, which jumps back to the loop's head: "try statement runs past
# its enclosing block"); the retry loop users write ---------------------------

@case((["value", 1],), (["value", "value"],), ([1],), (["key"],), ([],))
def for_loop_retrying_until_a_try_body_breaks(xs):
    log = []
    for x in xs:
        try:
            got = _step(log, x)
            break
        except ValueError:
            log.append("retry")
        log.append("next")
    else:
        got = None
    return got, log


# --- a with in a for loop returning a constant: the iterator is popped after
# __exit__, before the constant is loaded (3.10: "code after __exit__ that is
# not the code after the with") ---------------------------------------------

@case(([1, 2], False), (["value", 1], True), (["value"], False), ([], False))
def for_loop_whose_with_returns_a_constant(xs, suppress):
    for x in xs:
        with Ctx([], "a", suppress):
            _step([], x)
            return 1


# --- a comprehension in a finally block (3.12+ inlines it, with a handler
# block of its own that restores the iteration variable: in the handler's
# copy of the finally body it sits inline, behind a jump; its RERAISE is no
# end of the finally body.  Was "finally block left without its copy") -------

@case(([1, 2], 1), ([0, 3], "value"), ([], "key"))
def finally_building_a_list_by_comprehension(xs, x):
    log = []
    try:
        _step(log, x)
    finally:
        log.append([v * 2 for v in xs if v])
    return log


# --- a finally block ending in a while loop, inside a with (3.12+: the
# loop's exits in the handler's copy are two RERAISEs; in the body's copy, a
# line's NOP that one of them jumps to.  Was "finally block left without its
# copy") ---------------------------------------------------------------------

@case(([1, 2], 1, False), ([1], "value", True), ([], "value", False))
def with_try_finally_ending_in_a_while_loop(xs, x, suppress):
    log = []
    xs = list(xs)
    with Ctx(log, "a", suppress):
        try:
            _step(log, x)
        finally:
            while xs:
                log.append(xs.pop())
    return log


# --- nested withs whose body returns a constant: the constant is loaded
# after both __exit__ calls, and a suppressed exception goes on in a copy of
# the enclosing with's exit and the code after it (3.11+: "stack underflow",
# or "with block left for another place than after it") --------------------

@case((1, False, False), ("value", False, True), ("value", True, False), ("value", False, False))
def nested_withs_returning_a_constant(x, s_outer, s_inner):
    with Ctx([], "a", s_outer):
        with Ctx([], "b", s_inner):
            _step([], x)
            return 1
    return 2


@case((1, False, False), ("value", False, True), ("value", True, False), ("value", False, False))
def nested_withs_returning_none_at_the_end(x, s_outer, s_inner):
    with Ctx([], "a", s_outer):
        with Ctx([], "b", s_inner):
            _step([], x)
            return None


# --- the same then-part followed by an else and more code: the cold handler
# jumps back past the else, to the code after the if (3.12+: the if was
# read without its else, or the try "ran past its enclosing block") ---------

@case((1, True), (1, False), (0, True), ("value", True), ("value", False))
def if_else_then_code_whose_then_part_is_a_with_returning(x, suppress):
    log = []
    if x:
        with Ctx(log, "a", suppress):
            return _step(log, x), log
    else:
        log.append("else")
    log.append("after")
    return "end", log


@case((1,), (0,), ("value",), ("key",))
def if_else_then_code_whose_then_part_is_a_try_returning(x):
    log = []
    if x:
        try:
            return _step(log, x), log
        except ValueError:
            log.append("caught")
    else:
        log.append("else")
    log.append("after")
    return "end", log


# --- the then-part returns inside an enclosing with, whose handler jumps
# back to the code after the with, not to the code after the if (functools'
# lru_cache wrapper: once read as the else) ----------------------------------

@case((1, True), (0, True), (0, False), ("value", True), ("value", False))
def return_in_an_if_inside_a_with_then_more_code(x, suppress):
    log = []
    with Ctx(log, "a", suppress):
        if x:
            return _step(log, x), log
        log.append("not x")
    log.append("after")
    return "end", log


# --- while True whose only jump back is a `continue` in an except clause
# (3.12+: cold code after the function; the try body's `break` falls into
# the code after the loop) ----------------------------------------------------

@case((["value", "value", 3],), ([1],), (["value", "key"],))
def retry_with_continue_in_except_as(xs):
    log = []
    xs = list(xs)
    while True:
        x = xs.pop(0)
        try:
            got = _step(log, x)
            break
        except ValueError as e:
            if e.args[0] == "value":
                continue
            raise
    log.append(got)
    return log


@case((["value", 2],), ([1],), (["key"],))
def retry_with_continue_in_bare_except(xs):
    log = []
    xs = list(xs)
    while True:
        try:
            got = _step(log, xs.pop(0))
            break
        except ValueError:
            if len(log) < 5:
                continue
            raise
    return got, log


# --- except clauses returning the same value as a later, unrelated return
# (3.12+: a clause's `return` is a copy of no code after the try when that
# code lies past the enclosing if branch) -------------------------------------

@case(("d", [1, 2], [1, 2]), ("d", [1, 2], [1]), ("d", [1], [1, 2]), ("d", [1], [2]), ("x", [1], [1]), ("x", [], [1]))
def tries_returning_like_the_code_after_the_if(kind, a, b):
    i1, i2 = iter(a), iter(b)
    if kind == "d":
        try:
            for k1 in i1:
                if k1 != next(i2):
                    return False
        except StopIteration:
            return False
        try:
            next(i2)
        except StopIteration:
            return True
        return False
    if len(a) != len(b):
        return False
    return True


# --- an await in a try body inside a with (3.12+: the await's CLEANUP_THROW,
# placed after the function, is protected by the try's handler; that entry
# once stretched the try body over the code after it) ------------------------

@case((b"ab", 2), (b"", 0), (b"abc", 2), (b"value", 5))
async def await_in_try_inside_with_then_assert(data, n):
    log = []
    with Ctx(log, "c"):
        if not data:
            await asyncio.sleep(0)
            return log
        try:
            written = await _astep(log, "value" if data == b"value" else n)
        except ValueError as ex:
            raise KeyError("broken") from ex
        assert written == len(data)
    return written, log


# --- while True whose only exit is a `break` in an except clause (3.12+: the
# clause is cold code after the loop's jump back) -----------------------------

@case((0, [1, 2, 3]), (1, [1]), (0, []))
def break_in_except_clause_ends_the_loop(a, rs):
    res = []
    rs = list(rs)
    if a:
        res.append(1)
        return res
    cl = ""
    while True:
        try:
            c = rs.pop()
        except IndexError:
            break
        cl += str(c)
    res.append(cl)
    return res


# --- the same retry loop as the whole of an if branch (3.12+: its only jump
# back is cold code after the else branch) ------------------------------------

@case((1, ["value", "value", 1]), (1, ["key"]), (0, [2]), (1, [3]))
def retry_loop_as_an_if_branch(p, xs):
    log = []
    xs = list(xs)
    if p:
        while True:
            try:
                x = _step(log, xs.pop(0))
            except ValueError:
                log.append("again")
            else:
                return x, log
    else:
        return None, log


# --- a try body ending in `if c: return x` (3.11: the return is past the
# protected range, the if's false path jumps to the JUMP_FORWARD after it;
# it printed `if not c: pass` and then an unconditional return) ---------------

@case(("trio", []), ("asyncio", []), ("key", []), ("value", []))
def try_body_ending_in_if_return(x, log):
    # (a constant return: a computed value would be protected)
    try:
        if _step(log, x) == "trio":
            return True
    except KeyError:
        log.append("missing")
    return False


# --- an async try whose body is a with holding an await, with except and
# else (the else body was read into the try body) -----------------------------

@case((None,), ("value",), ("key",))
async def async_try_with_await_except_else(x):
    log = []
    try:
        with Ctx(log, "c"):
            y = await _astep(log, x)
    except BaseException as e:
        log.append(("handled", type(e).__name__))
    else:
        log.append(("else", y))
    return log


async def _astep(log, x):
    await asyncio.sleep(0)
    return _step(log, x)


# --- a with body ending in `return <const>`, break or continue: the
# unwinding calls __exit__ first, then the exit goes on elsewhere than a
# suppressed exception does (it was read as code after the with) ------------

@case((1, False, []), (0, True, []), ("value", True, []), ("value", False, []))
def with_ending_in_a_constant_return(x, suppress, log):
    with Ctx(log, "c", suppress):
        if x == 1:
            return 1
        _step(log, x)
        return 2
    return 6


@case(([1, 2], False, []), (["value", 2], True, []), (["value"], False, []), ([], True, []))
def with_ending_in_a_break(xs, suppress, log):
    for x in xs:
        with Ctx(log, "c", suppress):
            _step(log, x)
            break
    return 3


@case(([1, 2], False, []), (["value", 2], True, []), (["key"], False, []))
def with_ending_in_a_continue(xs, suppress, log):
    for x in xs:
        with Ctx(log, "c", suppress):
            _step(log, x)
            continue
        log.append("suppressed")
    return 3


# --- a try/except whose body is a with, then another try (3.12+: the with's
# cold handler stretched the first try's table entries over the second) ----

@case((1, 2, False, []), ("value", 2, True, []), (1, "value", False, []), (1, "key", False, []),
      ("key", 1, False, []))
def try_with_then_another_try(x, y, suppress, log):
    try:
        with Ctx(log, "c", suppress):
            _step(log, x)
    except BaseException:
        log.append("first")
        raise
    try:
        _step(log, y)
    except ValueError:
        log.append("second")
    except BaseException:
        log.append("third")
        raise


# --- finally bodies holding a with or a try (3.12+: the handler's copy of the
# body has their handlers inline, the other copies after the function; and
# the closing RERAISE, copied into the ends of their clauses, is no longer
# the handler's last instruction) -------------------------------------------

@case((1, 2, False), ("value", 2, False), (1, "value", True), ("value", "key", True), ("key", "value", False))
def finally_holding_a_with(x, y, suppress):
    log = []
    try:
        try:
            _step(log, x)
        finally:
            with Ctx(log, "c", suppress):
                _step(log, y)
    except Exception as e:
        log.append(type(e).__name__)
    return log


@case((1, 2, []), ("value", 2, []), (1, "value", []), (1, "key", []))
def finally_holding_a_try_except(x, y, log):
    try:
        _step(log, x)
    finally:
        try:
            _step(log, y)
        except ValueError:
            log.append("caught")


@case((1, 2), ("value", 2), (1, "value"), ("key", "value"), (1, "key"))
def finally_holding_a_try_except_then_more(x, y):
    log = []
    try:
        try:
            _step(log, x)
        finally:
            try:
                _step(log, y)
            except ValueError as e:
                log.append(str(e))
            else:
                log.append("else")
            log.append("after")
        return log, 3
    except Exception as e:
        return log, type(e).__name__


@case((1, 2, False, []), ("value", 2, True, []), (1, "value", True, []), (1, "value", False, []))
def finally_holding_a_with_then_a_return(x, y, suppress, log):
    try:
        _step(log, x)
    finally:
        with Ctx(log, "c", suppress):
            _step(log, y)
    return 3


@case((1, 2, []), ("value", 2, []), ("key", "value", []), (1, "key", []))
def try_except_finally_holding_a_with(x, y, log):
    try:
        _step(log, x)
    except BaseException:
        log.append("except")
        raise
    finally:
        with Ctx(log, "c", True):
            _step(log, y)


@case(([1, 2], 2, []), ([1, "value"], 2, []), ([1], "value", []), ([], "value", []))
def loop_with_a_finally_holding_a_with(xs, y, log):
    for x in xs:
        try:
            _step(log, x)
        finally:
            with Ctx(log, "c", True):
                _step(log, y)
    return len(log)


@case((1, 2, []), ("value", 2, []), (1, "value", []), (1, "key", []))
def return_in_try_finally_holding_a_try(x, y, log):
    try:
        return _step(log, x)
    finally:
        try:
            _step(log, y)
        except ValueError:
            log.append("caught")


@case((1, 2, False, []), ("value", 2, True, []), (1, "value", True, []), (1, "value", False, []))
async def async_finally_holding_an_async_with(x, y, suppress, log):
    try:
        await _astep(log, x)
    finally:
        async with AsyncCtx(log, "c", suppress):
            await _astep(log, y)
    return log


@case((1, 2, []), ("value", 2, []), (1, "value", []), (1, "key", []))
def finally_holding_a_try_finally_and_withs(x, y, log):
    try:
        _step(log, x)
    finally:
        try:
            with Ctx(log, "a", True):
                with Ctx(log, "b"):
                    _step(log, y)
        finally:
            log.append("inner")
    return 5


# --- except clauses ending in an if whose branches end the clause apart
# (3.12+ copies the code after the try, `POP_EXCEPT; return`, into each
# branch: the copies join where the try goes on) ----------------------------

@case((True, 1, []), (True, "value", []), (False, "value", []), (True, "key", []))
def if_around_a_try_whose_clause_ends_in_an_if(c, x, log):
    if c:
        try:
            _step(log, x)
        except ValueError as exc:
            if log:
                log.append(str(exc))


@case((1, []), ("value", []), ("key", []))
def clause_if_passing_else_reraising(x, log):
    try:
        _step(log, x)
    except LookupError as exc:
        if exc.args == ("value",):
            pass
        else:
            raise
    except ValueError as exc:
        if exc.args == ("value",) and log:
            log.append("logged")
        else:
            raise


@case((1, 0, []), ("value", 0, []), ("value", 1, []), ("value", None, []), ("key", 0, []))
def clause_with_nested_ifs_then_a_return(x, d, log):
    try:
        a, b = _step(log, x), 1
    except ValueError:
        a = -1
        if d is not None:
            if d:
                b = [d]
            else:
                b = [d, d]
        else:
            b = []
    return a, b


@case((False, 1, []), (True, 1, []), (True, "value", []), (True, "key", []))
def early_return_then_try_whose_last_clause_ends_in_an_if(c, x, log):
    if not c:
        return
    try:
        _step(log, x)
    except KeyError:
        log.append("key")
    except ValueError:
        if isinstance(x, str):
            log.append("value")


# --- finally bodies holding a loop (an instruction the exception table
# leaves out, the loop's jump back, has no handler to match) ----------------

@case(([3, 2], 1, []), ([3], "value", []), ([], 1, []))
def finally_holding_a_while_loop(stack, x, log):
    try:
        _step(log, x)
    finally:
        while stack:
            log.append(stack.pop())


@case(([1, 2], [2]), ([], []), ([1], [1]))
def generator_finally_holding_a_for_with_an_if(items, seen):
    log = []
    try:
        yield len(log)
    finally:
        for t in items:
            if t not in seen:
                log.append(t)
        yield log


# --- a finally body ending in an if with a two-part test inside a with (the
# handler's copy ends in two exits one after another, where the other copy
# falls into the with's exit) -------------------------------------------------

@case((1, None, True, []), ("value", 1, True, []), (1, 1, False, []), (1, 1, True, []))
def with_holding_a_finally_ending_in_an_and_test(x, widget, transient, log):
    with Ctx(log, "c", True):
        try:
            _step(log, x)
        finally:
            if widget is not None and transient:
                log.append("close")
    return len(log)


# --- a try/finally whose body never completes (`while True:` of tries, left
# by exceptions only): the handler follows the body, which has no normal
# exit and so no copy of the finally body -----------------------------------

@case(([1, 2], []), ([1, "value"], []), ([], []))
def while_true_of_tries_in_a_try_finally(xs, log):
    it = iter(xs)
    try:
        x = next(it)
        while True:
            _step(log, x)
            try:
                x = next(it)
            except BaseException as exc:
                log.append("end")
                raise exc
    finally:
        log.append("finally")


# --- finally bodies that never complete: they end in a raise or a return of
# their own (3.12+: no RERAISE closes the handler's copy; there the return
# first drops the exception, `SWAP 2; POP_TOP; SWAP 2; POP_EXCEPT`) ----------

@case((1, []), ("value", []), ("key", []))
def finally_ending_in_a_raise(x, log):
    try:
        _step(log, x)
    finally:
        log.append("cleanup")
        raise KeyError("finally")


@case((1,), ("value",), (0,))
def finally_ending_in_a_return(x):
    log = []
    ret = "..."
    try:
        if x:
            ret = str(_step(log, x))[:3]
        else:
            ret = "none"
    finally:
        return "%s: %s %r" % (type(x).__name__, ret, log)


@case((1, []), ("value", []), ("key", []))
def try_except_finally_returning(x, log):
    try:
        _step(log, x)
    except ValueError:
        log.append("caught")
    finally:
        return len(log)


@case((1, []), ("value", []))
async def async_finally_ending_in_an_awaited_return(x, log):
    try:
        await _astep(log, x)
    finally:
        result = await double_later(len(log))
        return result


# --- `return await ...` in a try/finally inside an async with: the finally
# copy before the return is followed by the await of __aexit__ (it was read
# as code of the try body, which ran the finally body twice) ---------------

@case((1, False, []), ("value", True, []), ("value", False, []))
async def return_await_in_try_finally_in_async_with(x, suppress, log):
    async with AsyncCtx(log, "c", suppress):
        try:
            return await _astep(log, x)
        finally:
            log.append("finally")
    return "suppressed"


# --- an except clause whose type is computed by a call (`except (A, f()):`):
# its test is no finally body ------------------------------------------------

def _lookup_error():
    return LookupError


@case((1, []), ("value", []), ("key", []))
def except_clause_with_a_called_type(x, log):
    try:
        _step(log, x)
    except (ValueError, _lookup_error()) as exc:
        log.append(type(exc).__name__)
    return len(log)


# --- retrying under a context manager that suppresses: the body breaks out of
# the loop, an exception __exit__ suppresses goes round again (the only way
# back to the loop's head is the with's handler) -------------------------------

def _attempts(*xs):
    return list(xs)


@case((_attempts("value", 1), []), (_attempts("value", "value"), []), (_attempts(), []),
      (_attempts("key", 1), []))
def for_loop_retrying_under_a_suppressing_with(xs, log):
    for x in xs:
        with Ctx(log, "m", True):
            _step(log, x)
            break
    else:
        log.append("gave up")
    return log


@case((_attempts("value", 1), []), (_attempts("value", "key"), []))
def while_true_retrying_under_a_suppressing_with(xs, log):
    while True:
        x = xs.pop(0)  # (raises once xs is empty: the loop ends)
        with Ctx(log, "m", True):
            _step(log, x)
            break
    return log


@case((_attempts("value", 1), []), (_attempts("value", "value"), []), (_attempts(), []))
def while_loop_retrying_under_a_suppressing_with(xs, log):
    while xs:
        with Ctx(log, "m", True):
            _step(log, xs.pop(0))
            break
    return log


@case((_attempts("value", 1), []), (_attempts("value", "value"), []), (_attempts(), []))
def while_loop_retrying_under_a_suppressing_with_then_code(xs, log):
    while xs:
        log.append(len(xs))
        with Ctx(log, "m", True):
            _step(log, xs.pop(0))
            break
    else:
        return "exhausted"
    log.append("done")
    return log


@case((_attempts("value", 1, "key"), []), (_attempts(), []))
def while_loop_continuing_from_a_with(xs, log):
    while xs:
        with Ctx(log, "m", True):
            if _step(log, xs.pop(0)) == 1:
                continue
            log.append("after")
    return log


@case((True, False, _attempts("value", 1), []), (True, False, _attempts(), []), (False, True, _attempts(1), []),
      (False, False, _attempts(1), []))
def while_else_breaking_from_a_with_in_an_if_branch(c1, c2, xs, log):
    # (the break goes where the if statement goes on, past the elif: it was
    # read as the branch's own way out, and lost)
    if c1:
        while xs:
            with Ctx(log, "m", True):
                _step(log, xs.pop(0))
                break
        else:
            raise ValueError("exhausted")
    elif c2:
        return 1
    return log
