"""Differential test on third-party code: decompile every function of the
pure-Python packages pinned in thirdparty_packages.txt, recompile the output
in the function's context and compare it with the function's own source
compiled in the same context (as tests/roundtrip.py does for the stdlib).

    python -m tests.thirdparty [--packages click rich ...] [--sample N]
                               [--show-failures N] [--json FILE]

Outcomes per function: identical, different, uncompilable, raised, hung,
crashed; besides, whether the output is the state-machine fallback, and for
"different" what the equivalence checker (depyf._core.equivalent, where it
exists) says of the reference and the recompiled code.  Files that do not
compile under the running interpreter are skipped and counted.

Wheels are downloaded with pip into build/thirdparty-cache/ when missing.
One worker process per package runs the functions, supervised as in
roundtrip.py: a function that hangs or crashes its worker is reported as such
and a fresh worker goes on after it.  Only the standard library is imported.
"""
import argparse
import ast
import copy
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import roundtrip  # noqa: E402  (beside this file)

HERE = os.path.dirname(os.path.abspath(__file__))
PACKAGE_LIST = os.path.join(HERE, "thirdparty_packages.txt")
CACHE = os.path.join(os.path.dirname(HERE), "build", "thirdparty-cache")

DEFAULT_EQUIVALENCE = "depyf._core:equivalent"
# The state machine's header: no structured form was found, or the one found
# failed validation (then the reason starts with "failed validation").
_FALLBACK_WHY = re.compile(r"# depyf: (?:no structured form was found(?: \(at offset -?\d+: (.*)\))?|"
                           r"the structured form (failed validation)(?: \(.*\))?);$", re.M)
OUTCOMES = roundtrip.OUTCOMES
# What the equivalence checker said of a "different" function.
VERDICTS = ("proven", "refuted", "unknown", "unavailable", "hung", "crashed")
_SOURCE_LIMIT = 6000  # characters of decompiled source kept per failure


# --- the corpus: pinned wheels, downloaded and unpacked on demand ---------------

def read_package_list(path=PACKAGE_LIST):
    """[(name, version)] in file order."""
    out = []
    with open(path) as f:
        for line in f:
            line = line.split("#", 1)[0].strip()
            if line:
                name, _, version = line.partition("==")
                out.append((name.strip(), version.strip()))
    return out


def package_dir(name, version, cache=CACHE):
    """The unpacked .py files of one wheel, downloading it first if missing."""
    target = os.path.join(cache, "%s-%s" % (name, version))
    if os.path.isdir(target):
        return target
    os.makedirs(cache, exist_ok=True)
    work = tempfile.mkdtemp(prefix=".download-", dir=cache)
    try:
        # Any interpreter fetches the same wheel; its files that need a newer
        # Python are skipped when the functions are collected.
        subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps",
                        "--only-binary", ":all:", "--ignore-requires-python",
                        "--disable-pip-version-check", "--dest", work,
                        "%s==%s" % (name, version)],
                       check=True, stdin=subprocess.DEVNULL)
        wheels = [f for f in os.listdir(work) if f.endswith(".whl")]
        if len(wheels) != 1:
            raise RuntimeError("pip download of %s==%s gave %r" % (name, version, wheels))
        unpacked = os.path.join(work, "files")
        with zipfile.ZipFile(os.path.join(work, wheels[0])) as wheel:
            for member in wheel.namelist():
                if member.endswith(".py") and ".dist-info/" not in member and ".data/" not in member:
                    wheel.extract(member, unpacked)
        try:
            os.rename(unpacked, target)  # atomic: a concurrent run sees all or nothing
        except OSError:
            if not os.path.isdir(target):
                raise
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return target


def source_files(root):
    """Paths of the .py files below `root`, relative and sorted."""
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for f in filenames:
            if f.endswith(".py"):
                out.append(os.path.relpath(os.path.join(dirpath, f), root))
    return sorted(out)


# --- functions and their context -------------------------------------------------

class Scope:
    """What a function's bytecode depends on beyond its own `def`: the
    roundtrip.Context (classes around it, imported names, future flags) and,
    for a function nested in another, the enclosing functions and the names
    they must bind for its free variables."""

    def __init__(self, path, imported, future_flags, freevars=()):
        self.path = tuple(path)  # (("class" | "def", name), ...), outermost first
        self.imported = tuple(imported)
        self.future_flags = future_flags
        self.freevars = tuple(freevars)

    @property
    def nested(self):
        return any(kind == "def" for kind, _ in self.path)

    def context(self):
        return roundtrip.Context([n for _, n in self.path], self.imported, self.future_flags)

    def qualname(self, name):
        parts = []
        for kind, n in self.path:
            parts.append(n + ".<locals>" if kind == "def" else n)
        return ".".join(parts + [name])


def _wrapper(scope, statements):
    """A module AST with `statements` inside the classes and functions of
    `scope.path`; the innermost enclosing function binds the free variables."""
    last_def = max(i for i, (kind, _) in enumerate(scope.path) if kind == "def")
    bind = list(scope.freevars)
    if any(kind == "class" for kind, _ in scope.path[last_def + 1:]):
        bind = [v for v in bind if v != "__class__"]  # that cell is the class's
    body = list(statements)
    for i in reversed(range(len(scope.path))):
        kind, name = scope.path[i]
        if i == last_def and bind:
            body = ast.parse(" = ".join(bind) + " = None").body + body
        if kind == "class":
            node = ast.parse("class %s:\n pass" % name).body[0]
        else:
            node = ast.parse("def %s():\n pass" % name).body[0]
        node.body = body or node.body
        body = [node]
    if scope.imported:
        body.insert(0, ast.parse("import " + ", ".join(scope.imported)).body[0])
    return ast.Module(body=body, type_ignores=[])


def compile_in_scope(statements, scope):
    """roundtrip.compile_in_context, extended to enclosing functions."""
    if not scope.nested:
        return roundtrip.compile_in_context(statements, scope.context())
    tree = roundtrip._flatten_locations(_wrapper(scope, statements))
    return compile(tree, "<decompiled>", "exec", flags=scope.future_flags, dont_inherit=True)


def find_in_scope(module_code, scope, name):
    """The code object of function `name` at `scope.path` in `module_code`."""
    code = module_code
    for kind, n in scope.path + (("def", name),):
        want_function = kind == "def"
        code = next((c for c in code.co_consts if roundtrip._is_code(c) and c.co_name == n
                     and roundtrip._is_function_code(c) == want_function), None)
        if code is None:
            return None
    return code


def iter_functions(module_code, defs):
    """(path, code) of every `def` in the module: at module level, in classes
    and nested in functions.  Lambdas, comprehensions and the like are
    compared as nested code of the function that holds them."""
    def walk(code, path):
        for const in code.co_consts:
            if not roundtrip._is_code(const) or const.co_name.startswith("<"):
                continue
            if not roundtrip._is_function_code(const):
                yield from walk(const, path + (("class", const.co_name),))
            elif (const.co_name, const.co_firstlineno) in defs:
                yield path, const
                yield from walk(const, path + (("def", const.co_name),))
    return list(walk(module_code, ()))


def sample_key(package, relpath, qualname):
    """The deterministic number that --sample N picks functions by."""
    return zlib.crc32(("%s/%s:%s" % (package, relpath, qualname)).encode("utf-8"))


def prepare_file(path, package, relpath, sample):
    """[(qualname, code, reference, scope)] for the functions of one file (the
    sampled ones), or raises SyntaxError & co. when the running interpreter
    cannot compile the file."""
    with open(path, "rb") as f:
        source = f.read()
    module_code = compile(source, path, "exec", dont_inherit=True)
    text = source.decode("utf-8")
    imported, future_flags = roundtrip.module_context(text, path, module_code)
    nodes = roundtrip.def_nodes(ast.parse(source, path))
    prepared = []
    for path_, code in iter_functions(module_code, nodes):
        scope = Scope(path_, imported, future_flags, code.co_freevars)
        qualname = scope.qualname(code.co_name)
        if sample > 1 and sample_key(package, relpath, qualname) % sample:
            continue
        node = copy.deepcopy(nodes[code.co_name, code.co_firstlineno])
        try:
            reference = find_in_scope(compile_in_scope([node], scope), scope, code.co_name)
        except SyntaxError as e:  # the context could not be rebuilt: say so
            reference = "no reference: %s" % e
        prepared.append(("%s:%d" % (qualname, code.co_firstlineno), code, reference, scope))
    return prepared


def roundtrip_function(decompile, code, reference, scope):
    """(outcome, detail, source, recompiled code or None) for one function;
    as roundtrip.roundtrip_one, in a Scope."""
    try:
        source = decompile(code)
        if not isinstance(source, str):
            raise TypeError("the decompiler returned %s, not str" % type(source).__name__)
    except Exception as e:  # the decompiler's failure is the result
        return "raised", "%s: %s" % (type(e).__name__, e), "", None
    try:
        module_code = compile_in_scope(ast.parse(source, "<decompiled>").body, scope)
    except Exception as e:  # SyntaxError, or one found by the compiler
        return "uncompilable", "%s: %s" % (type(e).__name__, e), source, None
    new = find_in_scope(module_code, scope, code.co_name)
    if new is None:
        return "different", "the output defines no function %r" % code.co_name, source, None
    diff = roundtrip.compare_code(reference, new)
    return ("different", diff, source, new) if diff else ("identical", "", source, new)


def fallback_reason(source):
    """'' when `source` is no state machine, else why the structurer gave up."""
    match = _FALLBACK_WHY.search(source)
    if match is None:
        return ""
    return match.group(1) or match.group(2) or "(no reason given)"


def difference_kind(detail):
    """A coarse class of compare_code's first difference, for the summary."""
    match = re.search(r": (\w+) differs?:", detail)
    if match:
        return match.group(1)
    detail = detail.replace("(end of code)", "end-of-code")
    match = re.search(r"instruction #\d+: want ([^\s,]+).*, got ([^\s,]+)", detail)
    if match:
        want, got = match.groups()
        if want != got:
            return "%s instead of %s" % (got, want)
        values = re.search(r"want \S+ \S+ \((.*)\), got \S+ \S+ \((.*)\)$", detail)
        return "%s with %s" % (want, "another value" if values and values.group(1) != values.group(2)
                                else "another argument")
    if "exception table" in detail:
        return "exception table"
    if "instruction #" in detail:
        return "code ends early or late"
    return detail.split(":")[-1].strip()[:60]


def _verdict(result):
    """The checker's (True | False | None, reason) as (verdict, reason)."""
    try:
        ok, reason = result
    except (TypeError, ValueError):
        return "unknown", "checker returned %r" % (result,)
    return {True: "proven", False: "refuted"}.get(ok, "unknown"), str(reason)


# --- worker: one package, one JSON line per event -----------------------------------

def worker(root, package, decompiler_spec, equivalence_spec, first_file, skip, sample):
    channel = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)  # what the decompiler prints cannot corrupt the protocol

    def emit(obj):
        channel.write(json.dumps(obj) + "\n")
        channel.flush()

    decompile = roundtrip.load_callable(decompiler_spec)
    try:
        equivalent = roundtrip.load_callable(equivalence_spec) if equivalence_spec else None
    except (ImportError, AttributeError):
        equivalent = None
    files = source_files(root)
    for i in range(first_file, len(files)):
        try:
            prepared = prepare_file(os.path.join(root, files[i]), package, files[i], sample)
        except Exception as e:  # SyntaxError mostly: newer syntax than this Python's
            emit({"file": i, "path": files[i], "skipped": "%s: %s" % (type(e).__name__, e)})
            continue
        emit({"file": i, "path": files[i], "functions": len(prepared)})
        for n, (qualname, code, reference, scope) in enumerate(prepared):
            if i == first_file and n < skip:
                continue
            emit({"start": n, "qualname": qualname})
            if isinstance(reference, str):
                emit({"done": n, "outcome": "noreference", "detail": reference})
                continue
            outcome, detail, source, new = roundtrip_function(decompile, code, reference, scope)
            event = {"done": n, "outcome": outcome, "detail": detail,
                     "fallback": fallback_reason(source)}
            if outcome != "identical":
                event["source"] = source[:_SOURCE_LIMIT]
            emit(event)
            if outcome == "different":
                if equivalent is None or new is None:
                    emit({"verdict": "unavailable", "reason": ""})
                    continue
                emit({"checking": n})
                try:
                    verdict, reason = _verdict(equivalent(reference, new))
                except Exception as e:
                    verdict, reason = "unknown", "checker raised %s: %s" % (type(e).__name__, e)
                emit({"verdict": verdict, "reason": reason})
    emit({"end": len(files)})


# --- parent: supervising workers ------------------------------------------------------

class Result:
    __slots__ = ("file", "qualname", "outcome", "detail", "fallback", "verdict", "reason", "source")

    def __init__(self, file, qualname, outcome, detail, fallback="", source=""):
        self.file, self.qualname, self.outcome, self.detail = file, qualname, outcome, detail
        self.fallback, self.source = fallback, source
        self.verdict = self.reason = None

    def as_json(self):
        return {k: getattr(self, k) for k in self.__slots__}


class PackageReport:
    def __init__(self, name, version):
        self.name, self.version = name, version
        self.results = []
        self.skipped_files = []  # (path, reason)
        self.files = 0

    def count(self, outcome):
        return sum(1 for r in self.results if r.outcome == outcome)

    def counts(self):
        c = {o: self.count(o) for o in OUTCOMES}
        c["functions"] = sum(c.values())
        c["noreference"] = self.count("noreference")
        c["fallback"] = sum(1 for r in self.results if r.fallback)
        for v in VERDICTS:
            c["different_" + v] = sum(1 for r in self.results
                                      if r.outcome == "different" and r.verdict == v)
        c["files"] = self.files
        c["skipped_files"] = len(self.skipped_files)
        return c


def run_package(name, version, decompiler_spec=roundtrip.DEFAULT_DECOMPILER,
                equivalence_spec=DEFAULT_EQUIVALENCE, timeout=roundtrip.DEFAULT_TIMEOUT,
                sample=1, cache=CACHE):
    """Round-trips every (sampled) function of one package in worker processes."""
    root = package_dir(name, version, cache)
    report = PackageReport(name, version)
    first_file, skip = 0, 0
    while True:
        with tempfile.TemporaryFile(mode="w+") as errors:
            proc = subprocess.Popen(
                [sys.executable, os.path.abspath(__file__), "--worker", root, "--package", name,
                 "--decompiler", decompiler_spec, "--equivalence", equivalence_spec or "",
                 "--first-file", str(first_file), "--skip", str(skip), "--sample", str(sample)],
                stdout=subprocess.PIPE, stderr=errors, env=roundtrip._worker_env())
            lines = roundtrip._Lines(proc)
            path = current = done = checking = None
            limit, finished = roundtrip._STARTUP_TIMEOUT, False
            try:
                while True:
                    line = lines.next(limit)
                    if line is None or not line:
                        if line is None:
                            failure, why = "hung", "no result after %gs" % timeout
                        else:
                            proc.wait()
                            errors.seek(0)
                            failure = "crashed"
                            why = "exit status %s; %s" % (proc.returncode, errors.read()[-2000:].strip())
                        if checking is not None:  # the checker, not the decompiler
                            report.results[-1].verdict, report.results[-1].reason = failure, why
                            current = checking
                        elif current is not None:
                            report.results.append(Result(path, current[1], failure, why))
                        else:
                            raise RuntimeError("third-party worker for %s %s: %s" % (name, failure, why))
                        first_file, skip = current[0], current[2] + 1
                        break
                    event = json.loads(line)
                    if "file" in event:
                        first_file, skip = event["file"], 0
                        path = event["path"]
                        report.files = max(report.files, event["file"] + 1)
                        if "skipped" in event:
                            report.skipped_files.append((path, event["skipped"]))
                        limit = roundtrip._STARTUP_TIMEOUT
                    elif "start" in event:
                        current, limit = (first_file, event["qualname"], event["start"]), timeout
                    elif "done" in event:
                        report.results.append(Result(path, current[1], event["outcome"], event["detail"],
                                                     event.get("fallback", ""), event.get("source", "")))
                        done, current, limit = current, None, roundtrip._STARTUP_TIMEOUT
                    elif "checking" in event:
                        checking, limit = done, timeout
                    elif "verdict" in event:
                        report.results[-1].verdict = event["verdict"]
                        report.results[-1].reason = event["reason"]
                        checking, limit = None, roundtrip._STARTUP_TIMEOUT
                    elif "end" in event:
                        report.files = event["end"]
                        finished = True
                        break
            finally:
                roundtrip._stop(proc)
        if finished:
            return report


# --- reporting -----------------------------------------------------------------------

def _pct(part, whole):
    return "%.1f%%" % (100.0 * part / whole) if whole else "-"


def totals(reports):
    out = {}
    for r in reports:
        for k, v in r.counts().items():
            out[k] = out.get(k, 0) + v
    return out


_ROW = "%-16s %6s %9s %6s %6s %6s %8s %7s %6s %5s %7s %6s"
_HEAD = ("package", "funcs", "identical", "diff", "proven", "refut", "fallback",
         "uncomp", "raised", "hung", "crashed", "skipF")


def _row(name, c):
    return _ROW % (name, c["functions"], _pct(c["identical"], c["functions"]), c["different"],
                   c["different_proven"], c["different_refuted"], _pct(c["fallback"], c["functions"]),
                   c["uncompilable"], c["raised"], c["hung"], c["crashed"],
                   "%d/%d" % (c["skipped_files"], c["files"]))


def format_table(reports):
    lines = [_ROW % _HEAD]
    lines += [_row(r.name, r.counts()) for r in reports]
    lines.append(_row("TOTAL", totals(reports)))
    return "\n".join(lines)


# Worst first: what --show-failures prints and the pytest wrapper fails on.
_SEVERITY = ("crashed", "hung", "raised", "uncompilable", "noreference", "different")


def failures(reports, verdicts=None):
    """[(package, Result)] of every non-identical function, worst first; for
    "different" only those whose verdict is in `verdicts` (default: all)."""
    rows = []
    for outcome in _SEVERITY:
        for r in reports:
            for res in r.results:
                if res.outcome == outcome and (outcome != "different" or verdicts is None
                                               or res.verdict in verdicts):
                    rows.append((r.name, res))
    if verdicts is None:  # refuted first among the different ones
        rows.sort(key=lambda row: (_SEVERITY.index(row[1].outcome), row[1].verdict != "refuted"))
    return rows


def format_failures(rows, limit, show_source=False):
    lines = []
    for package, res in rows[:limit]:
        verdict = " (equivalence: %s %s)" % (res.verdict, res.reason) if res.verdict else ""
        lines.append("%s %s %s [%s%s]%s\n    %s" % (
            package, res.file, res.qualname, res.outcome, ", fallback" if res.fallback else "",
            verdict, res.detail.replace("\n", "\n    ")))
        if show_source and res.source:
            lines.append("    | " + res.source.rstrip("\n").replace("\n", "\n    | "))
    if len(rows) > limit:
        lines.append("... and %d more" % (len(rows) - limit))
    return "\n".join(lines)


def summary(reports, top=12):
    """Why the structurer fell back, and what the first difference of the
    other "different" functions is, most frequent first."""
    why, kinds = {}, {}
    for r in reports:
        for res in r.results:
            if res.fallback:
                why[res.fallback] = why.get(res.fallback, 0) + 1
            elif res.outcome == "different":
                kind = difference_kind(res.detail)
                kinds[kind] = kinds.get(kind, 0) + 1
    lines = []
    for title, counts in (("fallback, why", why), ("different without fallback, first difference", kinds)):
        lines.append("%s (%d):" % (title, sum(counts.values())))
        ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
        lines += ["  %6d  %s" % (n, k) for k, n in ranked[:top]]
        if len(ranked) > top:
            lines.append("  %6d  (%d other kinds)" % (sum(n for _, n in ranked[top:]), len(ranked) - top))
    return "\n".join(lines)


def to_json(reports, elapsed, sample):
    return {
        "python": "%d.%d.%d" % sys.version_info[:3],
        "seconds": round(elapsed, 1),
        "sample": sample,
        "totals": totals(reports),
        "packages": [{
            "name": r.name, "version": r.version, "counts": r.counts(),
            "skipped_files": [list(s) for s in r.skipped_files],
            "failures": [res.as_json() for res in r.results if res.outcome != "identical"],
        } for r in reports],
    }


def run(packages, decompiler_spec=roundtrip.DEFAULT_DECOMPILER, equivalence_spec=DEFAULT_EQUIVALENCE,
        timeout=roundtrip.DEFAULT_TIMEOUT, sample=1, progress=None):
    reports = []
    for name, version in packages:
        reports.append(run_package(name, version, decompiler_spec, equivalence_spec, timeout, sample))
        if progress:
            progress(reports[-1])
    return reports


def checker_available(spec=DEFAULT_EQUIVALENCE):
    try:
        roundtrip.load_callable(spec)
    except (ImportError, AttributeError):
        return False
    return True


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m tests.thirdparty", description=__doc__.split("\n\n")[0])
    ap.add_argument("--packages", nargs="+", metavar="NAME",
                    help="only these packages of the pinned list (default: all)")
    ap.add_argument("--list", default=PACKAGE_LIST, help="the pinned package list (name==version lines)")
    ap.add_argument("--sample", type=int, default=1, metavar="N",
                    help="round-trip about one function in N, the same ones every run")
    ap.add_argument("--show-failures", type=int, default=0, metavar="N",
                    help="print the first difference of the N worst failing functions")
    ap.add_argument("--show-source", action="store_true",
                    help="with --show-failures: print the decompiled source too")
    ap.add_argument("--json", metavar="FILE", help="write machine-readable results to FILE")
    ap.add_argument("--timeout", type=float, default=roundtrip.DEFAULT_TIMEOUT,
                    help="seconds one function may take before it counts as hung")
    ap.add_argument("--decompiler", default=roundtrip.DEFAULT_DECOMPILER, metavar="MODULE:FUNCTION")
    ap.add_argument("--equivalence", default=DEFAULT_EQUIVALENCE, metavar="MODULE:FUNCTION",
                    help="equivalence checker for 'different' functions, used when it exists "
                         "(default: %(default)s; '' for none)")
    ap.add_argument("--quiet", action="store_true", help="no progress line per package")
    ap.add_argument("--worker", metavar="DIR", help=argparse.SUPPRESS)
    ap.add_argument("--package", help=argparse.SUPPRESS)
    ap.add_argument("--first-file", type=int, default=0, help=argparse.SUPPRESS)
    ap.add_argument("--skip", type=int, default=0, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        worker(args.worker, args.package, args.decompiler, args.equivalence,
               args.first_file, args.skip, args.sample)
        return 0
    packages = read_package_list(args.list)
    if args.packages:
        unknown = set(args.packages) - {n for n, _ in packages}
        if unknown:
            ap.error("not in %s: %s" % (args.list, ", ".join(sorted(unknown))))
        packages = [p for p in packages if p[0] in args.packages]
    started = time.monotonic()

    def progress(report):
        if not args.quiet:
            print(_row(report.name, report.counts()), file=sys.stderr, flush=True)

    reports = run(packages, args.decompiler, args.equivalence, args.timeout, args.sample, progress)
    elapsed = time.monotonic() - started
    checker = "yes" if args.equivalence and checker_available(args.equivalence) else "no"
    print("Python %d.%d, decompiler %s, equivalence checker: %s, sample 1/%d, %.1fs" % (
        sys.version_info[0], sys.version_info[1], args.decompiler, checker, args.sample, elapsed))
    print(format_table(reports))
    print()
    print(summary(reports))
    skipped = ["%s %s: %s" % (r.name, path, why) for r in reports for path, why in r.skipped_files]
    if skipped:
        print("skipped files:\n  " + "\n  ".join(skipped))
    if args.show_failures:
        print()
        print(format_failures(failures(reports), args.show_failures, args.show_source))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(to_json(reports, elapsed, args.sample), f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
