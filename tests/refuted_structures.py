"""Structured forms that translation validation refutes, over the standard
library's top-level modules of the running Python.

Decompiling a live function, depyf checks the structured source against the
bytecode and prints the state machine where the check fails, so such a
function is never printed wrong.  A .pyc of another Python is decompiled
without that check: there each function listed here would print the
structured form, which may compute something else.  Every entry is a lead
to a structurer bug (or to a gap of the checker).

    python -m tests.refuted_structures

Comprehension bodies are left out: taken alone they are no function the
checker can compare."""
import glob
import os
import re
import sysconfig

from depyf import _core

SKIPPED = {"<module>", "<listcomp>", "<genexpr>", "<setcomp>", "<dictcomp>"}
REFUSED = re.compile(r"# depyf: the structured form failed validation \((.*?)\);")


def code_objects(code):
    yield code
    for const in code.co_consts:
        if hasattr(const, "co_code"):
            yield from code_objects(const)


def main():  # (a closed stdout, `| head`, just ends the listing)
    lib = sysconfig.get_paths()["stdlib"]
    functions, refuted = 0, []
    for path in sorted(glob.glob(os.path.join(lib, "*.py"))):
        try:
            with open(path, encoding="utf-8") as f:
                top = compile(f.read(), path, "exec", dont_inherit=True)
        except (SyntaxError, ValueError, UnicodeDecodeError):
            continue
        for code in code_objects(top):
            if code.co_name in SKIPPED or not code.co_flags & 2:  # CO_NEWLOCALS: a function
                continue
            functions += 1
            try:
                text = _core.decompile(code)
            except Exception:  # (counted by tests.roundtrip, not here)
                continue
            # (its own verdict heads its body; a nested function's is its own entry)
            found = REFUSED.search("\n".join(text.split("\n", 3)[:3]))
            if found:
                name = getattr(code, "co_qualname", code.co_name)
                refuted.append((os.path.basename(path), name, found.group(1)))
    print("%d functions, %d structured forms refuted by validation" % (functions, len(refuted)))
    for module, name, why in refuted:
        print("  %s %s: %s" % (module, name, why[:120]))


if __name__ == "__main__":
    main()
