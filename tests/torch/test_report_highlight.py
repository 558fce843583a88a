"""The report's Python highlighting, character by character, against the tokens of CPython's
own `tokenize` (tests/torch/highlight_expected.py run by each interpreter 3.8-3.13 found):
PEP 701 f-strings as depyf prints them on 3.12+ (`f'{f'{x}'}'`, `f"{d["k"]}"`), in a page
opened in headless Chromium, and each interpreter's standard library.  No torch needed."""

import glob
import json
import os
import subprocess
import sys

import pytest

import report_browser as rb
import report_synthetic

from depyf.decompiler import decompile_pyc
from depyf.report import write_report

HERE = os.path.dirname(os.path.abspath(__file__))
EXPECTED = os.path.join(HERE, "highlight_expected.py")
VERSIONS = ["3.8", "3.9", "3.10", "3.11", "3.12", "3.13"]

# Python 3.12 source with the f-strings PEP 701 allows, and the other tokens around them.
PEP701_SOURCE = '''\
import re

type Alias[T] = list[T]


@dataclass(frozen=True)
class Row:
    def show[T](self, d: dict[str, T], x, w=8, *, sep="\\t") -> str:
        a = f"{d["key"]} {x!r:>{w}} {d['a']["b"]=} {{literal}} \\N{EM DASH}"
        b = f'{'\\n'.join(x)} {f"{f'{x}'}"} {sep!s}'
        c = f"{x:{"<" if w else ">"}10}" + f"{'it''s'}" + f"{"\\""}" + f"{'{'}{{}}"
        e = rf"\\d+{w}" + fR'{x}\\{{' + Rb"\\x00" + u"caf\\u00e9" + 0x_FF + 1_000.5e-3j + .5
        long = f"""first {x
                         # a comment inside a field
                         } then "quoted" and {d['k']:{w}}"""
        match = re.match(r"(\\w+)", a)
        match match:
            case None | [_, *_] if w > 0:
                return f"{a!r}{b}{c}{e}{long}"
            case _:
                return f"{'nested ' + str(x)}"
'''


def interpreter(version):
    """The interpreter of `version` (this one, pyenv's or pythonX.Y on the PATH), or None."""
    if "%d.%d" % sys.version_info[:2] == version:
        return sys.executable
    found = sorted(glob.glob("/root/.pyenv/versions/%s.*/bin/python%s" % (version, version)))
    if found:
        return found[-1]
    for d in os.environ.get("PATH", "").split(os.pathsep):
        path = os.path.join(d, "python" + version)
        if os.access(path, os.X_OK):
            return path
    return None


def expected_letters(python, paths):
    proc = subprocess.run([python, EXPECTED] + list(paths), capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


# The highlighting the page shows, one letter per character (code point): the class a
# character is shown with (hs: "s", hk: "k", ...), "." for none; lines as the page lays them
# out (each ends with its "\n").
LETTERS = """
function letters(lines) {
  var out = [];
  function walk(node, cls) {
    node.childNodes.forEach(function (child) {
      if (child.nodeType === Node.TEXT_NODE) { for (var ch of child.data) out.push(cls); return; }
      var m = /(?:^| )h(\\w)(?: |$)/.exec(child.getAttribute("class") || "");
      walk(child, m ? m[1] : cls);
    });
  }
  lines.forEach(function (line) { walk(line, "."); });
  return out.join("");
}
"""
SHOWN = LETTERS + "return letters(Array.from(document.querySelectorAll('main pre.code .ln')));"
# The page's highlighter on a text.
HIGHLIGHT = LETTERS + """
var host = document.createElement("div");
host.innerHTML = DepyfHighlight.highlightLines(arguments[0], "python").map(function (html) {
  return '<span class="ln">' + html + "\\n</span>";
}).join("");
return letters(Array.from(host.children));
"""

# Which of the page's classes show each of tokenize's categories.
ALLOWED = {"s": "s", "c": "c", "n": "n", "K": "n", "k": "k", "a": ".ftbvgd", "o": ".d"}


def differences(text, expected, shown):
    """Where the page's classes disagree with tokenize: a message for the first few, or ""."""
    shown = shown[:len(text)]
    assert len(shown) == len(text) == len(expected)
    bad = [i for i, (want, got) in enumerate(zip(expected, shown)) if want != "-" and got not in ALLOWED[want]]
    report = []
    for i in bad[:3]:
        start, end = text.rfind("\n", 0, i) + 1, text.find("\n", i)
        end = len(text) if end < 0 else end
        report.append("line %d, column %d: tokenize %r, page %r\n  %s\n  %s\n  %s" % (
            text.count("\n", 0, i) + 1, i - start, expected[i], shown[i],
            text[start:end], expected[start:end], shown[start:end]))
    return "%d characters differ; %s" % (len(bad), "\n".join(report)) if bad else ""


@pytest.fixture(scope="module")
def printed_312(tmp_path_factory):
    """PEP701_SOURCE compiled by Python 3.12 and decompiled by depyf: what our printer writes."""
    python = interpreter("3.12")
    if python is None:
        pytest.skip("no Python 3.12 here to compile PEP 701 f-strings")
    folder = tmp_path_factory.mktemp("pep701")
    source = folder / "row.py"
    source.write_text(PEP701_SOURCE)
    pyc = folder / "row.cpython-312.pyc"
    subprocess.run([python, "-c", "import py_compile, sys; py_compile.compile(sys.argv[1], cfile=sys.argv[2], doraise=True)",
                    str(source), str(pyc)], check=True, timeout=120)
    return decompile_pyc(str(pyc))


@pytest.mark.parametrize("version", ["3.12", "3.13"])
def test_pep701_fstrings_in_a_dump_are_highlighted_as_tokenize_reads_them(tmp_path, browser, printed_312, version):
    python = interpreter(version)
    if python is None:
        pytest.skip("Python %s is not installed" % version)
    assert "f'{f'{x}'}'" in printed_312 and """f'{d["key"]}""" in printed_312, "nested quotes, as 3.12 allows"
    dump = tmp_path / "dump"
    report_synthetic.make_dump(str(dump), functions=1, entries=1)
    texts = {"pep701_source.py": PEP701_SOURCE, "pep701_printed.py": printed_312}
    for name, text in texts.items():
        report_synthetic.add_file(str(dump), name, text)
    expected = dict(zip(texts, expected_letters(python, [str(dump / name) for name in texts])))
    index = write_report(str(dump))
    for name, text in texts.items():
        assert expected[name] is not None, "Python %s compiles %s" % (version, name)
        rb.open_report(browser, index, "#/0/file/" + name)
        shown = browser.execute_script(SHOWN)
        assert not differences(text, expected[name], shown), "%s: %s" % (name, differences(text, expected[name], shown))
    rb.screenshot(browser, "report_pep701_%s" % version.replace(".", ""))
    assert rb.console_errors(browser) == []


# Modules of every version rich in syntax, and the tests of the grammar and the tokenizer
# (those a version has).  DEPYF_HIGHLIGHT_STDLIB=all compares every file of the standard
# library instead (some minutes per version).
CORPUS = ["typing", "dataclasses", "argparse", "inspect", "_pydecimal", "tokenize", "ast", "enum", "string",
          "test.test_grammar", "test.test_fstring", "test.test_tokenize", "test.test_string_literals",
          "test.test_unicode_identifiers", "test.test_patma", "test.test_type_params"]
FIND = """
import glob, importlib.util, json, os, sys, sysconfig
if sys.argv[1] == "all":
    lib = sysconfig.get_paths()["stdlib"]
    found = [p for p in glob.glob(os.path.join(lib, "**", "*.py"), recursive=True) if "site-packages" not in p]
else:
    found = []
    for name in sys.argv[1:]:
        try:
            spec = importlib.util.find_spec(name)
        except ImportError:
            spec = None
        if spec is not None and spec.origin and spec.origin.endswith(".py"):
            found.append(spec.origin)
print(json.dumps(sorted(found)))
"""


def _corpus(python):
    which = ["all"] if os.environ.get("DEPYF_HIGHLIGHT_STDLIB") == "all" else CORPUS
    proc = subprocess.run([python, "-c", FIND] + which, capture_output=True, text=True, check=True, timeout=60)
    return json.loads(proc.stdout)


@pytest.mark.parametrize("version", VERSIONS)
def test_the_standard_library_is_highlighted_as_tokenize_reads_it(tmp_path, browser, version):
    python = interpreter(version)
    if python is None:
        pytest.skip("Python %s is not installed" % version)
    dump = tmp_path / "dump"
    report_synthetic.make_dump(str(dump), functions=1, entries=1)
    rb.open_report(browser, write_report(str(dump)))
    paths = _corpus(python)
    compared, failures = 0, []
    for path, expected in zip(paths, expected_letters(python, paths)):
        if expected is None:  # (not UTF-8, or a file of invalid code made for a test)
            continue
        with open(path, encoding="utf-8", newline="") as f:
            text = f.read()
        compared += 1
        problem = differences(text, expected, browser.execute_script(HIGHLIGHT, text))
        if problem:
            failures.append("%s: %s" % (path, problem))
    assert compared >= min(10, len(paths)), "Python %s: only %d of %d files compared" % (version, compared, len(paths))
    assert not failures, "%d of %d files differ:\n%s" % (len(failures), compared, "\n".join(failures[:5]))


def test_soft_keywords_are_keywords_only_where_a_statement_begins_so(tmp_path, browser):
    dump = tmp_path / "dump"
    report_synthetic.make_dump(str(dump), functions=1, entries=1)
    rb.open_report(browser, write_report(str(dump)))
    text = ("match = re.match(p, s)\nmatch command.split():\n    case [verb, *rest] if verb:  # a : colon\n"
            "        type Pair = tuple[int, int]\n    case _:\n        print(type(match), case)\n")
    shown = browser.execute_script(HIGHLIGHT, text)

    def classes_of(word):
        out, at = [], text.find(word)
        while at >= 0:
            if not (text[at - 1:at].isalnum() or text[at + len(word):at + len(word) + 1].isalnum()):
                out.append(shown[at])
            at = text.find(word, at + 1)
        return out

    assert classes_of("match") == [".", ".", "k", "."], "a name, a name, the statement, a name"
    assert classes_of("case") == ["k", "k", "."]
    assert classes_of("type") == ["k", "b"]
