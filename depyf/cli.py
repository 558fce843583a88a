"""The `depyf` command line: decompile or disassemble .pyc (or .py) files; report on a dump."""

import argparse
import os
import sys

from . import __version__, _core, _inputs

DESCRIPTION = "Decompile and disassemble CPython 3.8-3.13 bytecode; report on torch.compile dumps."

EPILOG = """\
FILE is a .pyc file written by any CPython 3.8-3.13, or a .py file, which is
first compiled by the running Python. Only regular files of at most 256 MiB
are read.

With -o OUTDIR, `depyf decompile` takes any number of files and directories
(searched recursively for .py and .pyc files), writes each one's source into
OUTDIR under the same relative path (x.pyc becomes x.py), and ends with a
summary; a file that fails is named on stderr and the others go on.

Errors are printed on one line as `depyf: FILE: reason`. Exit status:
  0  success.
  1  the file was read but its bytecode cannot be decompiled: the decompiler
     rejects it (invalid bytecode, or past one of its limits) or runs out of
     memory; with -o: one or more files failed, for any reason.
  2  the command cannot run as asked: bad arguments; FILE missing, not a
     regular file, larger than 256 MiB, not a .pyc of CPython 3.8-3.13
     (unknown magic number, truncated, damaged marshal data), or a .py file
     the running Python cannot compile (syntax error, nested too deeply); the
     output cannot be written (stdout closed or full, OUTDIR not creatable).
  130  interrupted (Ctrl-C).
"""


class OutputError(Exception):
    """OutputError(where, reason): where the result goes cannot take it."""


def _decompile(args):
    if args.outdir is not None:
        return _decompile_tree(args)
    if len(args.paths) != 1:
        raise argparse.ArgumentTypeError("give -o OUTDIR to decompile several files")
    if args.jobs is not None or args.timeout is not None:
        raise argparse.ArgumentTypeError("--jobs and --timeout go with -o OUTDIR")
    if os.path.isdir(args.file):
        raise _inputs.InputError("a directory (give -o OUTDIR to decompile every file in it)")
    return _inputs.decompile(args.file, indent=args.indent)


def _decompile_tree(args):
    from . import _batch

    try:
        os.makedirs(args.outdir, exist_ok=True)
    except OSError as e:
        raise OutputError(args.outdir, e.strerror or str(e)) from None
    totals = _batch.decompile_tree(args.paths, args.outdir, jobs=args.jobs, indent=args.indent,
                                   timeout=args.timeout, stderr=sys.stderr)
    args.status = 1 if totals["failed"] else 0
    return _batch.summary_text(totals, args.outdir)


def _disasm(args):
    return _inputs.disasm(args.file)


def _report(args):
    from .report import build

    try:
        path = build.write_report(args.file)
    except build.ReportError as e:
        raise _inputs.InputError(str(e)) from None
    except OSError as e:
        raise _inputs.InputError(e.strerror or str(e)) from None
    return "depyf: report written to %s (open it in a browser)" % path


class _Parser(argparse.ArgumentParser):
    """Usage errors too are one line: what is wrong, and where the help is."""

    def error(self, message):
        self.exit(2, "%s: error: %s (see %s --help)\n" % (self.prog, " ".join(message.split()), self.prog))


def _number(low, high, kind=int):
    def parse(text):
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"must be between {low} and {high}, not {value}")
        return value
    return parse


def _parser():
    """One subcommand per action; each sets `run`, a function of the parsed args returning the text to print."""
    parser = _Parser(
        prog="depyf", description=DESCRIPTION, epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version="depyf " + __version__)
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    dec = commands.add_parser("decompile", help="print the source of FILE, or write the sources of a tree with -o",
                              description="Print the decompiled source of FILE; with -o OUTDIR, write the "
                                          "source of every file in PATH... into OUTDIR.",
                              epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    dec.add_argument("paths", nargs="+", metavar="PATH",
                     help="a .pyc or .py file (with -o: any number of files and directories)")
    dec.add_argument("-o", "--output", dest="outdir", metavar="OUTDIR",
                     help="write a mirrored tree of .py files into OUTDIR, and a summary")
    dec.add_argument("--indent", type=_number(1, 16), default=4, metavar="N",
                     help="spaces per indentation level, 1-16 (default: 4)")
    dec.add_argument("-j", "--jobs", type=_number(1, 1024), default=None, metavar="N",
                     help="with -o: processes decompiling at once (default: one per core)")
    dec.add_argument("--timeout", type=_number(0.001, 1e6, float), default=None, metavar="SECONDS",
                     help="with -o: a file taking longer fails (default: no limit)")
    dec.set_defaults(run=_decompile, parser=dec)
    dis = commands.add_parser("disasm", help="print the disassembly of FILE",
                              description="Print the disassembly of FILE and of every code object in it.",
                              epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    dis.add_argument("file", metavar="FILE", help="a .pyc or .py file")
    dis.set_defaults(run=_disasm)
    rep = commands.add_parser(
        "report", help="write DUMP_DIR/index.html, a browsable report of a torch.compile dump",
        description="Write DUMP_DIR/index.html: one static page (no server, no network) showing every "
                    "function torch.compile compiled in the dump that depyf.prepare_debug wrote into "
                    "DUMP_DIR, its cache entries, guards, graph breaks, recompilations, graphs and "
                    "kernels. Exit status 2 when DUMP_DIR is not a directory or holds no dump.")
    rep.add_argument("file", metavar="DUMP_DIR", help="a directory written by depyf.prepare_debug")
    rep.set_defaults(run=_report)
    return parser


def _write(text):
    if sys.stdout is None:
        raise OutputError("<stdout>", "stdout is closed")
    # Source is UTF-8 whatever the terminal's encoding is.
    out = sys.stdout.buffer
    try:
        out.write(text.encode("utf-8", "backslashreplace"))
        if not text.endswith("\n"):
            out.write(b"\n")
        out.flush()
    except BrokenPipeError:
        # The reader went away (`depyf ... | head`): not an error of ours.
        _drop_stdout()
    except OSError as e:
        _drop_stdout()
        raise OutputError("<stdout>", "cannot write: %s" % (e.strerror or e)) from None


def _drop_stdout():
    """Points stdout at /dev/null, so that the flush at exit does not fail again."""
    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


def _fail(path, reason, status):
    reason = " ".join(str(reason).split())  # one line, whatever the reason held
    if sys.stderr is not None:
        print(f"depyf: {path}: {reason}", file=sys.stderr)
    return status


def main(argv=None):
    """Runs the command line; returns the exit status."""
    args = _parser().parse_args(argv)
    args.status = 0
    _inputs.quiet_compiler_warnings()
    if args.command == "decompile":
        args.file = args.paths[0]
    try:
        text = args.run(args)
        _write(text)
    except argparse.ArgumentTypeError as e:
        args.parser.error(str(e))
    except _inputs.InputError as e:
        return _fail(args.file, e, 2)
    except OutputError as e:
        return _fail(*e.args, 2)
    except _core.DecompilationError as e:
        return _fail(args.file, e, 1)
    except MemoryError as e:
        return _fail(args.file, str(e) or "out of memory", 1)
    except KeyboardInterrupt:
        return _fail(args.file, "interrupted", 130)
    return args.status
