"""The `depyf` command line: decompile or disassemble .pyc (or .py) files."""

import argparse
import os
import sys

from . import _core

DESCRIPTION = "Decompile and disassemble CPython 3.8-3.13 bytecode."

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
        raise InputError(f"line {e.lineno}: {e.msg}") from None
    except ValueError as e:  # NUL bytes in the source
        raise InputError(str(e)) from None


def _run(command, path, indent):
    code, pyc = _load(path)
    try:
        if command == "decompile":
            if code is not None:
                return _core.decompile(code, indent=indent)
            return _core.decompile_pyc(pyc, indent=indent)
        if code is not None:
            return _core.disasm(code)
        return _core.disasm_pyc(pyc)
    except ValueError as e:  # the .pyc reader's verdict on the file
        raise InputError(str(e)) from None


def _parser():
    parser = argparse.ArgumentParser(
        prog="depyf", description=DESCRIPTION, epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    dec = commands.add_parser("decompile", help="print the source of FILE",
                              description="Print the decompiled source of FILE.",
                              epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    dec.add_argument("file", metavar="FILE")
    dec.add_argument("--indent", type=int, default=4, metavar="N",
                     help="spaces per indentation level, 1-16 (default: 4)")
    dis = commands.add_parser("disasm", help="print the disassembly of FILE",
                              description="Print the disassembly of FILE and of every code object in it.",
                              epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    dis.add_argument("file", metavar="FILE")
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
    indent = getattr(args, "indent", 4)
    if not 1 <= indent <= 16:
        print(f"depyf: --indent must be between 1 and 16, not {indent}", file=sys.stderr)
        return 2
    try:
        text = _run(args.command, args.file, indent)
    except InputError as e:
        return _fail(args.file, e, 2)
    except _core.DecompilationError as e:
        return _fail(args.file, e, 1)
    except MemoryError:
        return _fail(args.file, "out of memory", 1)
    try:
        _write(text)
    except BrokenPipeError:
        # The reader went away (`depyf ... | head`): not an error of ours.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 0
