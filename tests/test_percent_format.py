"""`'...' % (x, ...)` and f-strings, which 3.11+ compiles one into the other.

CPython 3.11's AST optimizer turns a %-format of a tuple whose specs are all
`%s`, `%r` or `%a` (with flags, width and precision of up to two digits) into
an f-string.  The decompiler must print each such piece of bytecode back in a
spelling that compiles to the same code on the running Python: an f-string
whose field no pre-3.12 f-string can hold (a backslash) as the %-format, a
%-format the optimizer did not fold (its left operand was an f-string
without fields) with that f-string on its left.  Each format below is
checked against the running interpreter's own optimizer: decompile, compile
the output, compare the bytecode."""
import dis

import pytest

from depyf import _core

FORMATS = ["%s", "%+s", "%-5s", "%05s", "% s", "%#s", "%5.2s", "%123s", "%12s", "%.123s", "%d",
           "%s%s", "%%s", "%s %", "a%%b%s", "%-+s", "%s%%", "%.s", "%5.s", "%r", "%a", "%99.99s",
           "%99.999s", "{%s}", "%s\n%r"]
VALUES = ["x", "x.replace(\"'\", \"\\\\'\")"]


def instructions(code):
    return [(i.opname, i.argval if not hasattr(i.argval, "co_code") else None)
            for i in dis.get_instructions(code)]


def function_of(source):
    namespace = {}
    exec(compile(source, "<case>", "exec"), namespace)
    return namespace["f"]


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("value", VALUES, ids=["name", "backslash"])
@pytest.mark.parametrize("prefix", ["", "f"], ids=["str", "fstring"])
def test_percent_format_recompiles_to_the_same_bytecode(fmt, value, prefix):
    specs = fmt.replace("%%", "").count("%")
    if prefix == "f" and "{" in fmt:
        fmt = fmt.replace("{", "{{").replace("}", "}}")
    args = ", ".join([value] * max(specs, 1))
    source = "def f(x):\n    return %s%r %% (%s,)\n" % (prefix, fmt, args)
    original = function_of(source)
    text = _core.decompile(original.__code__, validate=False)
    assert "depyf:" not in text, text
    again = function_of(text)
    assert instructions(again.__code__) == instructions(original.__code__), "%s\nprinted as\n%s" % (source, text)
    assert _core.decompile(original.__code__) == text  # (validation agrees)
