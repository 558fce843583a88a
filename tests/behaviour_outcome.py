"""What calling a behaviour case does, as comparable data.  Shared by
test_behaviour.py and the .pyc fixture runner, which runs under interpreters
that have no pytest."""
import asyncio
import copy
import inspect


def drain(result):
    """Runs what a call returned to the end: a generator or async generator
    gives its items (and the type of the exception that ended it, if one
    did), a coroutine its result."""
    if inspect.isgenerator(result):
        items = []
        try:
            for item in result:
                items.append(item)
        except Exception as e:
            items.append(("raised", type(e)))
        return ("generator", items)
    if inspect.iscoroutine(result):
        return ("coroutine", asyncio.run(result))  # its exception is the call's
    if inspect.isasyncgen(result):
        async def collect():
            items = []
            try:
                async for item in result:
                    items.append(item)
            except Exception as e:
                items.append(("raised", type(e)))
            return items
        return ("async generator", asyncio.run(collect()))
    return result


def call(fn, args):
    """fn(*args) on a copy of args: the drained result and the arguments
    after the call, or the type of the exception raised."""
    args = copy.deepcopy(args)
    try:
        result = drain(fn(*args))
    except Exception as e:
        return ("raised", type(e))
    return ("returned", repr(result), repr(args))


class CallTimeout(BaseException):
    """A call ran past its limit (a BaseException: the code under test
    catching Exception does not swallow it)."""


def within(seconds, run, *args):
    """run(*args), raising CallTimeout once `seconds` have passed (SIGALRM,
    so POSIX only): a decompiled loop that never ends fails its case."""
    import signal

    def on_alarm(signum, frame):
        raise CallTimeout()

    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        return run(*args)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
