"""Behaviour cases for exception-handling shapes (try/except/finally, with)
that once decompiled to the state-machine fallback on 3.11-3.13 although a
structured form exists (issue 11, found on third-party packages).  Imported
by behaviour_cases.py, whose CASES they join; tests/test_exc_shapes.py checks
that none of them needs the fallback (nor fails validation)."""
import asyncio

from behaviour_cases import case


def _step(log, x):
    """Logs x; raises the exception x names, if any."""
    log.append(x)
    if x == "value":
        raise ValueError(x)
    if x == "key":
        raise KeyError(x)
    return x


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
