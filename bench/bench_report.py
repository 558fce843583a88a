"""How fast a large dump's report is written and its index rendered.

    .venv/bin/python bench/bench_report.py [--functions 50] [--entries 4]

Makes a synthetic dump (tests/torch/report_synthetic.py: no torch needed) of
FUNCTIONS compiled functions with ENTRIES compilations each (200 graphs by
default), writes its report, opens the index in headless Chromium and prints
the size of the report, the time to write it, and when the index had
rendered (milliseconds after navigation start).  The goal for 200 graphs is
a rendered index in under a second.  Needs chromium and chromedriver (the
report's browser tests install what they need the same way).
"""
import argparse
import os
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "tests", "torch"))

import report_browser as rb  # noqa: E402
import report_synthetic  # noqa: E402

from depyf.report import write_report  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--functions", type=int, default=50)
    ap.add_argument("--entries", type=int, default=4)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        dump = os.path.join(tmp, "dump")
        graphs = report_synthetic.make_dump(dump, functions=args.functions, entries=args.entries)
        start = time.perf_counter()
        index = write_report(dump)
        written = time.perf_counter() - start
        problem = rb._install()
        if problem:
            sys.exit("no headless browser: " + problem)
        with rb.chromium() as browser:
            rb.open_report(browser, index)
            rendered_ms = browser.execute_script("return window.depyfReportRenderedAt")
        print("report of %d graphs: %.1f MB, written in %.2f s, index rendered %.0f ms after navigation start"
              % (graphs, os.path.getsize(index) / 1e6, written, rendered_ms))


if __name__ == "__main__":
    main()
