"""What the command line reads: a .py file (compiled by the running Python) or a .pyc
file of any CPython 3.8-3.13, read safely (depyf/_files.py) with the .pyc header
checked before the rest of the file is read."""

import functools
import warnings

from . import _core
from ._files import RegularFile, UnreadableFile

PYC_HEADER_SIZE = 16
# A header the core accepts (3.11's magic number, no flags), followed by marshal's
# None: the core's verdict on it is the "header fine" answer that others are compared with.
_GOOD_HEADER_PROBE = b"\xa7\r\r\n" + bytes(12) + b"N"


class InputError(Exception):
    """The file cannot be used; the message is the reason."""


def quiet_compiler_warnings():
    """The compiler's warnings about the code being compiled (`is` with a literal, invalid
    escapes) say nothing about depyf's work, and would break the one-line-per-failure
    stderr: off, for the .py files read and for translation validation's compiles."""
    warnings.simplefilter("ignore", SyntaxWarning)
    warnings.simplefilter("ignore", DeprecationWarning)


def is_source(path):
    return str(path).endswith((".py", ".pyw"))


@functools.lru_cache(maxsize=None)
def _header_fine_reason():
    try:
        _core.disasm_pyc(_GOOD_HEADER_PROBE)
    except ValueError as e:
        return str(e)
    return None


def _check_pyc_header(header):
    """InputError with the core's reason when these first bytes cannot start a .pyc it reads."""
    try:
        _core.disasm_pyc(header + b"N")
    except ValueError as e:
        if len(header) < PYC_HEADER_SIZE or str(e) != _header_fine_reason():
            raise InputError(str(e)) from None


def load(path):
    """(code object, None) for a .py file, (None, bytes) for a .pyc file."""
    try:
        with RegularFile(path) as f:
            if is_source(path):
                data = f.read()
            else:
                header = f.read(PYC_HEADER_SIZE)
                _check_pyc_header(header)
                return None, header + f.read()
    except UnreadableFile as e:
        raise InputError(e.strerror or str(e)) from None
    try:
        return compile(data, str(path), "exec", dont_inherit=True), None
    except SyntaxError as e:
        raise InputError(f"line {e.lineno}: {e.msg}" if e.lineno else e.msg) from None
    except ValueError as e:  # NUL bytes in the source
        raise InputError(str(e)) from None
    except (RecursionError, MemoryError) as e:
        raise InputError("the running Python cannot compile it (%s%s)"
                         % (type(e).__name__, ": %s" % e if str(e) else "")) from None


def run(path, on_code, on_pyc, **options):
    """on_code(code, **options) for a .py file, on_pyc(data, **options) for a .pyc file."""
    code, pyc = load(path)
    if code is not None:
        return on_code(code, **options)
    try:
        return on_pyc(pyc, **options)
    except ValueError as e:  # the .pyc reader's verdict on the file
        raise InputError(str(e)) from None


def decompile(path, indent=4):
    return run(path, _core.decompile, _core.decompile_pyc, indent=indent)


def disasm(path):
    return run(path, _core.disasm, _core.disasm_pyc)
