"""`prepare_debug` dumps what torch.compile does; `debug` lets a debugger step through it."""

import contextlib
import logging
import os
import select
import stat
import sys

from depyf import _dump

__all__ = ["prepare_debug", "debug"]


@contextlib.contextmanager
def prepare_debug(dump_src_dir, clean_wild_fx_code=True, log_bytecode=False, *, report=True):
    """Dump every function torch.compile compiles while inside the block into `dump_src_dir`.

    Written files: `full_code_for_<fn>_<k>.py` (guards, transformed code, original
    code and dispatcher of each compiled function and its resume functions),
    `__transformed_code_<n>_for_<fn>.py`, and `__compiled_fn_<n>.<Stage>.<k>.py`
    / `__compiled_fn_<n>.kernel_<k>.py` for every graph stage that ran (a stage's file,
    the graph as torch logged it, is written when the block ends, and its forward runs
    from that file from then on).
    Functions compiled before the block are dumped too.  Under torchrun each
    rank writes into `rank_<r>/`.  Processes that dump into one directory at
    once (or the children of one multiprocessing parent) number their files
    apart, as the original depyf does: none overwrites another's, and the
    manifest (`depyf_manifest.json`, what the report reads) covers them all.  A
    run into a used directory, when no process of the last run is alive, first
    removes the files that run wrote (listed in `.depyf/`), never another file.  At the end, `dump_src_dir/index.html` shows
    it all in a browser (see `depyf report`); `report=False` skips it.  The
    older form `prepare_debug(fn, dir)` is accepted.  The program computes
    what it would without depyf: Dynamo's transformed code runs either as
    compiled from its dumped file, where that form was checked, or as Dynamo's
    own bytecode (docs/readable-dynamo.md says what may differ: where the
    items of a graph's output tuple are read, and when that tuple is freed).

    The original depyf's options: `clean_wild_fx_code=False` also keeps the code
    of every FX graph torch generated in the block that is no stage of a compiled
    function (graphs torch uses internally, or the program's own), each as
    `fx_graph_code_<md5>_<k>.py`; `log_bytecode=True` also writes, next to each
    transformed-code file, the code objects behind it (original, transformed,
    and decompiled-and-compiled-back).
    """
    if callable(dump_src_dir) and isinstance(clean_wild_fx_code, (str, os.PathLike)):
        dump_src_dir, clean_wild_fx_code = clean_wild_fx_code, True  # the older prepare_debug(fn, dir)
    if not isinstance(dump_src_dir, (str, os.PathLike)):
        raise TypeError("prepare_debug: dump_src_dir must be a path, got %s" % type(dump_src_dir).__name__)
    for name, value in (("clean_wild_fx_code", clean_wild_fx_code), ("log_bytecode", log_bytecode)):
        if not isinstance(value, int):
            raise TypeError("prepare_debug(dump_src_dir, clean_wild_fx_code=True, log_bytecode=False): "
                            "%s must be True or False, got %s" % (name, type(value).__name__))
    dd = _dump.dump_dir(os.fspath(dump_src_dir))
    _dump.remember_dir(dd)
    try:
        with contextlib.ExitStack() as stack:
            if not clean_wild_fx_code:
                from depyf import _wild_fx

                stack.enter_context(_wild_fx.kept(dd))
            stack.enter_context(_dump.Session(dd, log_bytecode=bool(log_bytecode)))
            yield
    finally:  # also when the block raised: the report shows what was compiled until then
        if report:
            _write_report(os.fspath(dump_src_dir))


def _write_report(path):
    """The HTML report of the dump; a failure is a warning, never the user's exception."""
    from depyf import report

    try:
        written = report.write_report(path)
    except Exception as err:
        logging.getLogger("depyf").warning("depyf: could not write the report in %s (%s: %s)",
                                           path, type(err).__name__, err)
        return
    print("depyf: report: %s" % written, file=sys.stderr)


@contextlib.contextmanager
def debug(pause=None):
    """Run compiled code so that breakpoints in the files of the last prepare_debug are hit.

    Prints where to set breakpoints, then pauses in the debugger (`breakpoint()`)
    so you can set them; `pause=False` skips that.  By default it pauses when the
    debugger can read commands: from a terminal, or from a pipe or file that is not
    at its end (as scripts that pipe pdb commands in expect); not when stdin is
    closed, /dev/null or exhausted, where pdb would read end-of-file and quit the
    program.  New compilations inside the block are dumped into the same directory.
    """
    dd = _dump.last_dir()
    if dd is None:
        raise RuntimeError("depyf.debug() needs a `with depyf.prepare_debug(dir):` block earlier "
                           "in this process: it runs the code dumped there")
    with _dump.Session(dd, summary=False, lazy=False):  # (while stopped, every file is already there)
        print(_where_to_break(dd), file=sys.stderr)
        if pause is None:
            pause = _stdin_can_answer()
        if pause:
            breakpoint()  # set breakpoints in the files listed above, then continue
        yield


def _stdin_can_answer():
    """True when a debugger could read commands from stdin, now or later (see debug)."""
    stdin = sys.stdin
    try:
        if stdin is None or stdin.closed:
            return False
        if stdin.isatty():
            return True
        fd = stdin.fileno()
        mode = os.fstat(fd).st_mode
    except (AttributeError, ValueError, OSError):  # (no file behind it: pytest's capture, a closed fd)
        return False
    if stat.S_ISCHR(mode):  # a device that is no terminal: /dev/null
        return False
    return not _at_end(stdin, fd)


def _at_end(stdin, fd):
    """True when `fd` (a pipe, file or socket) is at its end: readable now, and reading
    gives nothing.  A pipe with nothing in it yet is not: its writer may still send."""
    try:
        ready, _, _ = select.select([fd], [], [], 0)
    except (OSError, ValueError):  # (Windows selects only sockets)
        return False
    peek = getattr(getattr(stdin, "buffer", None), "peek", None)
    if not ready or peek is None:
        return False
    try:
        return peek(1) == b""  # (readable, so this does not block; what it reads stays buffered)
    except OSError:
        return False


def _where_to_break(dd):
    names = sorted(os.listdir(dd.path))
    transformed = [n for n in names if n.startswith("__transformed_code_")]
    lines = ["depyf: compiled code now runs from the files in %s" % dd.path,
             "  set breakpoints in the transformed code (%s)," % (", ".join(transformed[:3]) + (
                 ", ..." if len(transformed) > 3 else "") if transformed else "none dumped yet"),
             "  and in the graphs that execute for your backend: *.Captured_Graph.*.py (eager),",
             "  *.Forward_graph.*.py / *.Backward_graph.*.py (aot_eager), *.kernel_*.py (inductor);",
             "  then continue."]
    return "\n".join(lines)
