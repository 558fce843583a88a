"""depyf.show(dump_dir) as Jupyter shows it: the HTML of `_repr_html_` inside a page
(as in a notebook's output cell), in a real browser: the report renders inside its
frame and its links work there."""
import report_browser as rb
import report_synthetic

import depyf


def test_the_report_renders_and_navigates_inside_the_notebook_frame(tmp_path):
    dump = tmp_path / "dump"
    report_synthetic.make_dump(str(dump), functions=3, entries=2)
    cell = tmp_path / "notebook.html"
    cell.write_text("<!DOCTYPE html><html><body><h1>In [1]: depyf.show(%r)</h1><div class=output>%s</div>"
                    "</body></html>" % (str(dump), depyf.show(dump, height=700)._repr_html_()))
    with rb.chromium() as browser:
        browser.get("file://" + str(cell))
        browser.switch_to.frame(browser.find_element("css selector", "div.output iframe"))
        rb._wait_rendered(browser, timeout=30)
        assert int(rb.wait_for(browser, "#count-graphs .num").text) == 6
        rows = browser.find_elements("css selector", "main table.list tr.click")
        assert len(rows) == 3, "one row per compiled function"
        rb.follow(browser, rows[0])
        assert "#/0/fn/" in browser.execute_script("return location.hash")
        rb.wait_for(browser, "main .card")
        assert rb.console_errors(browser) == []
        browser.switch_to.default_content()
        rb.screenshot(browser, "notebook_display")
