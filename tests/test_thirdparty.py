"""Round trip of third-party code (tests/thirdparty.py) under the running
interpreter: no function may fail to decompile, decompile to source that does
not compile, hang or crash; a function that recompiles to different bytecode
must be proven equivalent where the equivalence checker exists (without it,
those are reported as expected failures, never hidden).

About one function in DEPYF_THIRDPARTY_SAMPLE (default 4) is round-tripped,
the same ones every run; 1 runs them all, as `python -m tests.thirdparty` does.
The wheels are downloaded into build/thirdparty-cache/ on first use."""
import json
import os
import sys

import pytest

import thirdparty

SAMPLE = int(os.environ.get("DEPYF_THIRDPARTY_SAMPLE", "4"))
CEILING_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fallback_ceiling.json")
BROKEN = ("crashed", "hung", "raised", "uncompilable", "noreference")


@pytest.fixture(scope="module")
def reports():
    reports = thirdparty.run(thirdparty.read_package_list(), sample=SAMPLE)
    print("\nPython %d.%d, one function in %d\n%s" % (
        sys.version_info[0], sys.version_info[1], SAMPLE, thirdparty.format_table(reports)))
    return reports


def test_every_function_decompiles_to_compilable_source(reports):
    broken = [row for row in thirdparty.failures(reports) if row[1].outcome in BROKEN]
    assert not broken, "%d functions:\n%s" % (len(broken), thirdparty.format_failures(broken, 40))


def test_every_different_function_is_proven_equivalent(reports):
    unproven = thirdparty.failures(reports, verdicts=set(thirdparty.VERDICTS) - {"proven"})
    # (the state machine printed where no structured form was found or the
    # structured one failed validation is counted apart, as the fallback)
    unproven = [row for row in unproven if row[1].outcome == "different" and not row[1].fallback]
    if not thirdparty.checker_available():
        if unproven:
            pytest.xfail("%d functions recompile to different bytecode; no equivalence checker "
                         "(%s) to prove them" % (len(unproven), thirdparty.DEFAULT_EQUIVALENCE))
        return
    assert not unproven, "%d functions not proven equivalent:\n%s" % (
        len(unproven), thirdparty.format_failures(unproven, 40))


def test_the_state_machine_is_printed_no_more_often_than_its_ceiling(reports):
    """The share of functions printed as the state machine (no structured
    form, or one that failed validation) may not grow: a ratchet per
    version, measured on the default sample."""
    with open(CEILING_FILE) as f:
        ceiling = json.load(f).get("%d.%d" % sys.version_info[:2])
    if ceiling is None or SAMPLE != 4:
        pytest.skip("no ceiling for this interpreter and sample")
    counts = thirdparty.totals(reports)
    share = 100.0 * counts["fallback"] / counts["functions"]
    assert share <= ceiling, "%.2f%% of %d functions print the state machine (ceiling %.2f%%):\n%s" % (
        share, counts["functions"], ceiling,
        thirdparty.format_failures([row for row in thirdparty.failures(reports) if row[1].fallback], 40))


# --- the harness itself, on requests with the stand-ins of roundtrip_fakes.py
# and thirdparty_fakes.py --------------------------------------------------------

needs_unparse = pytest.mark.skipif(sys.version_info < (3, 9), reason="the stand-ins need ast.unparse")
REQUESTS = [p for p in thirdparty.read_package_list() if p[0] == "requests"]


def harness_run(decompiler, checker=""):
    [report] = thirdparty.run(REQUESTS, "roundtrip_fakes:" + decompiler,
                              "thirdparty_fakes:" + checker if checker else "", timeout=5)
    return report


@pytest.fixture(scope="module")
def unparsed():
    return harness_run("unparse")


@needs_unparse
def test_real_source_rates_identical_nested_functions_included(unparsed):
    assert unparsed.count("identical") == len(unparsed.results) > 200
    assert any(".<locals>." in r.qualname for r in unparsed.results)


@needs_unparse
@pytest.mark.parametrize("checker, verdict", [("always_proven", "proven"), ("", "unavailable")])
def test_checker_verdicts_are_reported_for_different_functions(checker, verdict):
    report = harness_run("unparse_with_flipped_comparison", checker)
    different = [r for r in report.results if r.outcome == "different"]
    assert different and report.count("identical") > 0
    assert {r.verdict for r in different} == {verdict}
    assert all(r.verdict is None for r in report.results if r.outcome == "identical")


@needs_unparse
@pytest.mark.parametrize("checker, verdict", [("hang_on_target", "hung"), ("crash_on_target", "crashed")])
def test_a_misbehaving_checker_marks_its_function_and_the_run_goes_on(unparsed, checker, verdict):
    import thirdparty_fakes

    report = harness_run("unparse_with_flipped_comparison", checker)
    marked = [r for r in report.results if r.verdict == verdict]
    assert [r.qualname.split(":")[0] for r in marked] == [thirdparty_fakes.TARGET]
    assert marked[0].outcome == "different"
    assert [r.qualname for r in report.results] == [r.qualname for r in unparsed.results]
