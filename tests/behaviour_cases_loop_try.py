"""Behaviour cases for loops whose body holds a try statement, shapes that
once decompiled to the state-machine fallback on 3.12/3.13 although a
structured form exists (issue 11, found on third-party packages).  Imported
by behaviour_cases.py, whose CASES they join; tests/test_loop_try_shapes.py
checks that none of them needs the fallback (nor fails validation)."""
from behaviour_cases import case


def _get(log, xs):
    """Pops and logs the next item; raises the exception it names, if any."""
    x = xs.pop(0) if xs else None
    log.append(x)
    if x == "value":
        raise ValueError(x)
    if x == "key":
        raise KeyError(x)
    return x


QUEUES = [([1, 2, None],), ([1, "value", 3, None],), (["key", 4, None],), (["value", "key", None],), ([None],),
          ([5, "key"],)]


# --- `while True:` whose body holds a try/except: 3.12+ places the except
# clause after the function, from where it jumps back into the loop body ---

@case(*QUEUES)
def while_true_with_try_except_then_code(xs):
    # anyio WorkerThread.run, httpcore _receive_event
    log, out = [], []
    xs = list(xs)
    while True:
        try:
            x = _get(log, xs)
        except ValueError as exc:
            x = str(exc)
        if x is None:
            return out, log
        out.append(x)


@case(*QUEUES)
def while_true_with_try_in_an_if(xs):
    log, out = [], []
    xs = list(xs)
    while True:
        x = xs[0] if xs else None
        if x is None:
            return out, log
        if x != 2:
            result = None
            try:
                result = _get(log, xs)
            except ValueError as exc:
                result = exc.args
            except KeyError:
                result = "k"
            finally:
                log.append("fin")
            if out is not None:
                out.append(result)
        else:
            xs.pop(0)
        log.append("done")


@case(*QUEUES)
def while_true_with_try_except_else_and_break(xs):
    log, out = [], []
    xs = list(xs)
    while True:
        try:
            x = _get(log, xs)
        except ValueError:
            x = -1
        else:
            out.append("ok")
        out.append(x)
        if x is None or len(out) > 5:
            break
    return out, log


@case(*QUEUES)
def while_true_with_try_except_continue_and_break(xs):
    log, out = [], []
    xs = list(xs)
    while True:
        try:
            x = _get(log, xs)
        except KeyError:
            continue
        except ValueError:
            break
        if x is None:
            return out, log
        out.append(x)
    return 7, out, log
