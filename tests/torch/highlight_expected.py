"""What a Python highlighter must show, by the tokens of the interpreter that runs this script.

Run by any CPython 3.8-3.13 (standard library only): `python highlight_expected.py FILE...`
prints a JSON list with, per file, one letter per character of its text (null for a file
that this interpreter cannot compile):
  s  string (f-strings on 3.12+: the text between replacement fields; the fields' code has
     letters of its own)
  c  comment        n  number       K  True, False, None      k  keyword
  a  any other name                 o  operator
  -  not compared: blanks; soft keywords (a keyword or a name depending on the statement);
     before 3.12, the inside of an f-string, which that tokenizer leaves as one string.
tests/torch/test_report_highlight.py compares the report's highlighting with this.
"""

import io
import json
import keyword
import sys
import tokenize

FSTRING_START = getattr(tokenize, "FSTRING_START", None)  # (3.12+)
FSTRING_MIDDLE = getattr(tokenize, "FSTRING_MIDDLE", None)
FSTRING_END = getattr(tokenize, "FSTRING_END", None)
SOFT_KEYWORDS = set(getattr(keyword, "softkwlist", ()))
CONSTANTS = {"True", "False", "None"}


def categories(text):
    line_starts = [0]  # (tokenize's lines end at "\n" only, not at every str.splitlines break)
    for i, ch in enumerate(text):
        if ch == "\n":
            line_starts.append(i + 1)

    def offset(row_col):
        return line_starts[row_col[0] - 1] + row_col[1]

    out = ["-"] * len(text)

    def mark(start, end, category):
        for i in range(start, end):
            out[i] = category

    fstrings = []
    for tok in tokenize.generate_tokens(io.StringIO(text).readline):
        start, end = offset(tok.start), offset(tok.end)
        if tok.type == FSTRING_START:
            fstrings.append(start)
            mark(start, end, "s")
        elif tok.type == FSTRING_END:
            # (the text between the fields is string; 3.12's FSTRING_MIDDLE positions are
            # off by one after `{{`, so it is what no other token covers)
            for i in range(fstrings.pop(), end):
                if out[i] == "-" and not text[i].isspace():
                    out[i] = "s"
        elif tok.type == tokenize.STRING:
            prefix = len(tok.string) - len(tok.string.lstrip("rRbBuUfF"))
            if "f" in tok.string[:prefix].lower():  # (before 3.12: only its quotes are compared)
                quotes = 3 if tok.string[prefix:prefix + 3] in ('"""', "'''") else 1
                mark(start, start + prefix + quotes, "s")
                mark(end - quotes, end, "s")
            else:
                mark(start, end, "s")
        elif tok.type == tokenize.COMMENT:
            mark(start, end, "c")
        elif tok.type == tokenize.NUMBER:
            mark(start, end, "n")
        elif tok.type == tokenize.NAME:
            name = tok.string
            mark(start, end, "K" if name in CONSTANTS else "k" if keyword.iskeyword(name)
                 else "?" if name in SOFT_KEYWORDS else "a")
        elif tok.type == tokenize.OP:
            mark(start, end, "o")
    for i, ch in enumerate(text):
        if ch.isspace() or out[i] == "?":
            out[i] = "-"
    return "".join(out)


def main(paths):
    result = []
    for path in paths:
        try:
            with open(path, encoding="utf-8", newline="") as f:
                text = f.read()
            compile(text, path, "exec", dont_inherit=True)
            result.append(categories(text))
        except (UnicodeDecodeError, SyntaxError, ValueError, tokenize.TokenError):
            result.append(None)  # (not UTF-8, or not valid Python for this interpreter)
    json.dump(result, sys.stdout)


if __name__ == "__main__":
    main(sys.argv[1:])
