"""The `depyf` command line: decompile or disassemble .pyc (or .py) files; report on a dump."""

import argparse
import os
import sys

from . import _core

DESCRIPTION = "Decompile and disassemble CPython 3.8-3.13 bytecode; report on torch.compile dumps."

EPILOG = """\
FILE is a .pyc file written by any CPython 3.8-3.13, or a .py file, which is
first compiled by the running Python.

Exit status: 0 on success; 1 when the decompiler cannot handle the bytecode;
2 when FILE cannot be used (missing, not a .pyc file, truncated, bad marshal
data, a .py file with a syntax error). Errors are printed on one line as
`depyf: FILE: reason`.
"""


class InputError(Exception):
    """FILE cannot be used; the message is the reason."""


def _load(path):
    """(code object, None) for a .py file, (None, bytes) for anything else."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise InputError(e.strerror or str(e)) from None
    if not path.endswith((".py", ".pyw")):
        return None, data
    try:
        return compile(data, path, "exec", dont_inherit=True), None
    except SyntaxError as e:
        raise InputError(f"line {e.lineno}: {e.msg}" if e.lineno else e.msg) from None
    except ValueError as e:  # NUL bytes in the source
        raise InputError(str(e)) from None


def _from_pyc(core_function, data, **options):
    try:
        return core_function(data, **options)
    except ValueError as e:  # the .pyc reader's verdict on the file
        raise InputError(str(e)) from None


def _decompile(args):
    code, pyc = _load(args.file)
    if code is not None:
        return _core.decompile(code, indent=args.indent)
    return _from_pyc(_core.decompile_pyc, pyc, indent=args.indent)


def _disasm(args):
    code, pyc = _load(args.file)
    if code is not None:
        return _core.disasm(code)
    return _from_pyc(_core.disasm_pyc, pyc)


def _report(args):
    from .report import build

    try:
        path = build.write_report(args.file)
    except build.ReportError as e:
        raise InputError(str(e)) from None
    except OSError as e:
        raise InputError(e.strerror or str(e)) from None
    return "depyf: report written to %s (open it in a browser)" % path


def _indent(text):
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not 1 <= value <= 16:
        raise argparse.ArgumentTypeError(f"must be between 1 and 16, not {value}")
    return value


def _parser():
    """One subcommand per action; each sets `run`, a function of the parsed args returning the text to print."""
    parser = argparse.ArgumentParser(
        prog="depyf", description=DESCRIPTION, epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    dec = commands.add_parser("decompile", help="print the source of FILE",
                              description="Print the decompiled source of FILE.",
                              epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    dec.add_argument("file", metavar="FILE", help="a .pyc or .py file")
    dec.add_argument("--indent", type=_indent, default=4, metavar="N",
                     help="spaces per indentation level, 1-16 (default: 4)")
    dec.set_defaults(run=_decompile)
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
    # Source is UTF-8 whatever the terminal's encoding is.
    out = sys.stdout.buffer
    out.write(text.encode("utf-8", "backslashreplace"))
    if not text.endswith("\n"):
        out.write(b"\n")
    out.flush()


def _fail(path, reason, status):
    reason = " ".join(str(reason).split())  # one line, whatever the reason held
    print(f"depyf: {path}: {reason}", file=sys.stderr)
    return status


def main(argv=None):
    """Runs the command line; returns the exit status."""
    args = _parser().parse_args(argv)
    try:
        text = args.run(args)
    except InputError as e:
        return _fail(args.file, e, 2)
    except _core.DecompilationError as e:
        return _fail(args.file, e, 1)
    except MemoryError as e:
        return _fail(args.file, str(e) or "out of memory", 1)
    try:
        _write(text)
    except BrokenPipeError:
        # The reader went away (`depyf ... | head`): not an error of ours.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 0
