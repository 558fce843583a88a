"""A dump with 200 compiled graphs (synthetic: no torch needed) renders its whole report
index in a real browser, and a graph page opens by its address.  How fast is measured
by bench/bench_report.py, not here: a test never asserts a timing."""
import report_browser as rb
import report_synthetic

from depyf.report import write_report


def test_a_200_graph_dump_renders_its_index(tmp_path):
    dump = tmp_path / "dump"
    assert report_synthetic.make_dump(str(dump), functions=50, entries=4) == 200
    index = write_report(str(dump))
    with rb.chromium() as browser:
        rb.open_report(browser, index)
        assert int(rb.wait_for(browser, "#count-graphs .num").text) == 200
        assert int(rb.wait_for(browser, "#count-recompilations .num").text) == 150
        assert int(rb.wait_for(browser, "#count-kernels .num").text) == 400
        rows = browser.find_elements("css selector", "main table.list tr.click")
        assert len(rows) == 50, "one row per compiled function"
        rb.screenshot(browser, "report_200_graphs")
        # A graph opens directly by its address.
        rb.open_report(browser, index, "#/0/graph/__compiled_fn_200")
        assert "__compiled_fn_200" in rb.wait_for(browser, "#stage-view").text
        assert rb.console_errors(browser) == []
