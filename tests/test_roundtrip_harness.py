"""The round-trip harness itself: it rates correct source identical, notices a
changed operator, a shifted `try` and a wrong class, and survives a hanging
or crashing decompiler.  Uses the stand-ins of roundtrip_fakes.py."""
import ast
import sys

import pytest

import roundtrip

pytestmark = pytest.mark.skipif(sys.version_info < (3, 9), reason="the stand-ins need ast.unparse")

# Small modules with methods, super(), closures, generators, private names
# and calls on imported modules.
MODULES = ["json/decoder", "contextlib", "textwrap"]


def compiled(source, name="f", class_path=()):
    context = roundtrip.Context(class_path)
    module = roundtrip.compile_in_context(ast.parse(source).body, context)
    return roundtrip.find_function(module, class_path, name)


def test_real_source_rates_identical():
    reports = roundtrip.run_corpus(MODULES, "roundtrip_fakes:unparse")
    totals = roundtrip.totals(reports)
    assert totals["total"] > 50
    assert totals["identical"] == totals["total"], roundtrip.format_failures(reports, 10)


def test_flipped_comparison_is_reported_for_exactly_the_functions_that_compare():
    import roundtrip_fakes

    reports = roundtrip.run_corpus(MODULES, "roundtrip_fakes:unparse_with_flipped_comparison")
    outcomes = {"identical": 0, "different": 0}
    for report in reports:
        prepared = roundtrip.prepare_module(roundtrip.module_path(report.name))
        for (_, code, _, _), (qualname, outcome, detail) in zip(prepared, report.results):
            expected = "different" if roundtrip_fakes.has_comparison(code) else "identical"
            assert outcome == expected, (qualname, detail)
            outcomes[outcome] += 1
    assert outcomes["identical"] > 10 and outcomes["different"] > 10


def test_hanging_decompile_counts_as_hung_and_the_run_goes_on():
    report = roundtrip.run_module("bisect", "roundtrip_fakes:hang_on_target", timeout=1)
    outcomes = {q: o for q, o, _ in report.results}
    assert outcomes.pop("insort_right") == "hung"
    assert outcomes and set(outcomes.values()) == {"identical"}


def test_crashing_decompile_counts_as_crashed_and_the_run_goes_on():
    report = roundtrip.run_module("bisect", "roundtrip_fakes:crash_on_target")
    outcomes = {q: o for q, o, _ in report.results}
    assert outcomes.pop("insort_right") == "crashed"
    assert outcomes and set(outcomes.values()) == {"identical"}


def test_constants_compare_by_type_and_sign():
    assert roundtrip.compare_code(compiled("def f(): return 0.0"), compiled("def f(): return -0.0"))
    assert roundtrip.compare_code(compiled("def f(): return 1"), compiled("def f(): return True"))
    nan = "def f(): return 1e999 - 1e999"  # folded to a nan constant
    assert roundtrip.compare_code(compiled(nan), compiled(nan)) is None


def test_try_around_other_statements_is_reported():
    # From 3.11 the two differ only in the exception table.
    wide = "def f():\n try:\n  a()\n  b()\n except E:\n  pass\n"
    narrow = "def f():\n a()\n try:\n  b()\n except E:\n  pass\n"
    assert roundtrip.compare_code(compiled(wide), compiled(narrow))


def test_difference_in_nested_function_names_it():
    outer = "def f():\n def g(x):\n  return x + %d\n return g\n"
    diff = roundtrip.compare_code(compiled(outer % 1), compiled(outer % 2))
    assert diff.startswith("f.g: ")


def test_private_names_are_mangled_by_the_enclosing_class():
    method = "def m(self):\n return self.__x\n"
    in_a = compiled(method, "m", ("A",))
    assert in_a.co_names == ("_A__x",)
    assert roundtrip.compare_code(in_a, compiled(method, "m", ("A",))) is None
    assert roundtrip.compare_code(in_a, compiled(method, "m", ("B",)))
