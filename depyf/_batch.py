"""`depyf decompile PATH... -o OUTDIR`: many files decompiled on all cores.

Each file is decompiled in a worker process (the core gives the GIL back while
it runs, but translation validation compiles with the GIL held, so threads
would mostly wait for each other), one file at a time, so that a file that
kills its worker or runs past --timeout fails alone: the worker is replaced
and the batch goes on.  The output tree mirrors the input: a directory's files
keep their path below it, a file given by name goes into OUTDIR itself, and
`x.pyc` becomes `x.py` (`__pycache__/m.cpython-311.pyc` becomes
`__pycache__/m.cpython-311.py`, so that a tree holding several versions loses
nothing).
"""

import collections
import multiprocessing
import multiprocessing.connection
import os
import re
import shutil
import signal
import sys
import time

INPUT_SUFFIXES = (".py", ".pyw", ".pyc")
STATE_MACHINE_NOTE = "equivalent state machine over the bytecode's blocks"
_BODY = re.compile(r"^[ \t]*(?:async[ \t]+)?(?:def|class)[ \t]", re.M)


class Task(collections.namedtuple("Task", "source target size")):
    """One input file and the file its source goes to."""


class Result(collections.namedtuple("Result", "source functions state_machines error")):
    """error: None, or the reason the file failed (one line)."""


def output_name(name):
    for suffix in (".pyc", ".pyw"):
        if name.endswith(suffix):
            return name[: -len(suffix)] + ".py"
    return name


def _size(path):
    try:
        return os.stat(path).st_size
    except OSError:
        return 0


def collect(paths, outdir):
    """(tasks, failures): every input file below `paths`, biggest first, with its output path;
    failures are Results for inputs that would overwrite another's output."""
    skip = os.path.realpath(outdir)
    found = []
    for path in paths:
        path = os.fspath(path)
        if not os.path.isdir(path):
            found.append((path, output_name(os.path.basename(path))))
            continue
        for root, dirs, files in os.walk(path):
            dirs[:] = sorted(d for d in dirs if os.path.realpath(os.path.join(root, d)) != skip)
            for name in sorted(files):
                if name.endswith(INPUT_SUFFIXES):
                    full = os.path.join(root, name)
                    found.append((full, output_name(os.path.relpath(full, path))))
    tasks, failures, owner = [], [], {}
    for source, rel in found:
        target = os.path.join(outdir, rel)
        if target in owner:
            failures.append(Result(source, 0, 0, "its output %s is already written from %s" % (target, owner[target])))
            continue
        owner[target] = source
        tasks.append(Task(source, target, _size(source)))
    tasks.sort(key=lambda t: -t.size)
    return tasks, failures


def _one_line(text):
    return " ".join(str(text).split())


def decompile_one(task, indent):
    """The Result of decompiling task.source into task.target."""
    from . import _core, _inputs

    try:
        text = _inputs.decompile(task.source, indent=indent)
    except _inputs.InputError as e:
        return Result(task.source, 0, 0, _one_line(e))
    except _core.DecompilationError as e:
        return Result(task.source, 0, 0, _one_line(e))
    except MemoryError as e:
        return Result(task.source, 0, 0, _one_line(e) or "out of memory")
    except Exception as e:  # a bug of ours: the file fails, the batch goes on
        return Result(task.source, 0, 0, "internal error: %s: %s" % (type(e).__name__, _one_line(e)))
    try:
        os.makedirs(os.path.dirname(task.target) or ".", exist_ok=True)
        with open(task.target, "w", encoding="utf-8", errors="backslashreplace") as f:
            f.write(text if text.endswith("\n") else text + "\n")
    except OSError as e:
        return Result(task.source, 0, 0, "cannot write %s: %s" % (task.target, e.strerror or e))
    return Result(task.source, 1 + len(_BODY.findall(text)), text.count(STATE_MACHINE_NOTE), None)


def _serve(conn, indent):
    """A worker: decompiles the tasks it is sent until it is sent None."""
    from . import _inputs

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent stops the batch on ^C
    _inputs.quiet_compiler_warnings()
    while True:
        try:
            task = conn.recv()
        except EOFError:
            return
        if task is None:
            return
        conn.send(decompile_one(task, indent))


class _Worker:
    def __init__(self, context, indent):
        self.conn, child = context.Pipe()
        self.process = context.Process(target=_serve, args=(child, indent), daemon=True)
        self.process.start()
        child.close()
        self.task = None
        self.since = 0.0

    def give(self, task):
        self.task, self.since = task, time.monotonic()
        try:
            self.conn.send(task)
        except OSError:  # the worker died meanwhile: the main loop sees it and fails the task
            pass

    def stop(self, kill=False):
        if kill:
            self.process.kill()
        else:
            try:
                self.conn.send(None)
            except OSError:
                pass
        self.process.join()
        self.conn.close()


def _context():
    # fork starts a worker in a millisecond and needs no re-import; elsewhere the default.
    if sys.platform.startswith("linux"):
        return multiprocessing.get_context("fork")
    return multiprocessing.get_context()


def _death(process):
    code = process.exitcode
    if code is not None and code < 0:
        try:
            return "the decompiling process was killed by %s" % signal.Signals(-code).name
        except ValueError:
            pass
    return "the decompiling process ended (exit status %s)" % code


def run(tasks, jobs, indent, on_result, timeout=None):
    """Decompiles `tasks` on `jobs` worker processes; calls on_result(Result) as each ends."""
    context = _context()
    pending = collections.deque(tasks)
    workers = [_Worker(context, indent) for _ in range(max(1, min(jobs, len(tasks))))]

    def next_task(worker):
        if pending:
            worker.give(pending.popleft())
        else:
            worker.task = None

    def replace(worker, reason):
        on_result(Result(worker.task.source, 0, 0, reason))
        worker.stop(kill=True)
        fresh = _Worker(context, indent)
        workers[workers.index(worker)] = fresh
        next_task(fresh)

    try:
        for worker in workers:
            next_task(worker)
        while any(w.task for w in workers):
            busy = [w for w in workers if w.task]
            wait = None
            if timeout:
                wait = max(0.0, min(w.since for w in busy) + timeout - time.monotonic())
            multiprocessing.connection.wait([w.conn for w in busy] + [w.process.sentinel for w in busy], wait)
            for worker in busy:
                if worker.conn.poll():
                    try:
                        result = worker.conn.recv()
                    except (EOFError, OSError):
                        worker.process.join()
                        replace(worker, _death(worker.process))
                        continue
                    on_result(result)
                    next_task(worker)
                elif not worker.process.is_alive():
                    replace(worker, _death(worker.process))
                elif timeout and time.monotonic() - worker.since > timeout:
                    replace(worker, "took longer than %g s (--timeout)" % timeout)
    finally:
        for worker in workers:
            worker.stop(kill=worker.task is not None)


class Progress:
    """A one-line progress bar on stderr when it is a terminal; nothing otherwise."""

    def __init__(self, total, stream):
        self.total, self.stream = total, stream
        self.shown = stream is not None and stream.isatty()
        self.done = self.failed = 0
        self.start = self.drawn = time.monotonic()

    def step(self, result):
        self.done += 1
        self.failed += result.error is not None
        now = time.monotonic()
        if self.shown and (now - self.drawn >= 0.1 or self.done == self.total):
            self.drawn = now
            self._draw(now)

    def _draw(self, now):
        text = " %d/%d files  %d failed  %.1f s" % (self.done, self.total, self.failed, now - self.start)
        width = shutil.get_terminal_size().columns - len(text) - 3
        bar = ""
        if width >= 10:
            full = width * self.done // max(1, self.total)
            bar = "[" + "#" * full + "." * (width - full) + "]"
        self.stream.write("\r" + bar + text)
        self.stream.flush()

    def message(self, line):
        """A line printed above the bar."""
        if self.stream is None:
            return
        self.clear()
        self.stream.write(line + "\n")
        self.stream.flush()

    def clear(self):
        if self.shown:
            self.stream.write("\r\033[K")
            self.stream.flush()


def available_cores():
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def decompile_tree(paths, outdir, jobs=None, indent=4, timeout=None, stderr=None):
    """Runs the batch; returns the summary (a dict), failures reported on `stderr` as they come."""
    jobs = jobs or available_cores()
    start = time.monotonic()
    tasks, failures = collect(paths, outdir)
    progress = Progress(len(tasks) + len(failures), stderr)
    totals = collections.Counter()

    def on_result(result):
        totals["files"] += 1
        if result.error is not None:
            totals["failed"] += 1
            progress.message("depyf: %s: %s" % (result.source, result.error))
        totals["functions"] += result.functions
        totals["state_machines"] += result.state_machines
        progress.step(result)

    for failure in failures:
        on_result(failure)
    try:
        if tasks:
            run(tasks, jobs, indent, on_result, timeout)
    finally:
        progress.clear()
    totals["seconds"] = time.monotonic() - start
    totals["jobs"] = max(1, min(jobs, len(tasks)))
    return totals


def summary_text(totals, outdir):
    functions, machines = totals["functions"], totals["state_machines"]
    return ("%d files in %.1f s on %d processes: %d decompiled, %d failed\n"
            "%d functions (module, class and def bodies): %d structured, %d as state machines\n"
            "output: %s" % (totals["files"], totals["seconds"], totals["jobs"],
                            totals["files"] - totals["failed"], totals["failed"],
                            functions, functions - machines, machines, outdir))
