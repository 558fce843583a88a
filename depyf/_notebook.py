"""`depyf.show(dump_dir)`: the report of a dump, displayed inline in Jupyter.

The report (depyf/report) is one self-contained page with its own styles and
scripts.  Inside a notebook it goes into an iframe whose `srcdoc` holds the
whole page: its styles cannot touch the notebook's, its scripts run as they do
from file://, and nothing needs a server or a file the browser can reach.
"""

import html
import os

from .report import build


class ReportView:
    """The report of a dump; Jupyter displays it (`_repr_html_`) as the page in a frame.

    `html` is the page itself; `save()` writes it as DUMP_DIR/index.html."""

    def __init__(self, dump_dir, height=640):
        self.dump_dir = os.path.abspath(os.fspath(dump_dir))
        if not os.path.isdir(self.dump_dir):
            raise build.ReportError("%s: not a directory" % self.dump_dir)
        self.height = int(height)
        self.html = build.render(self.dump_dir)

    def _repr_html_(self):
        # sandbox: scripts run (the page is all script), but in an origin of their own,
        # away from the notebook's cookies and kernel.
        return ('<iframe title="depyf report of %s" srcdoc="%s" sandbox="allow-scripts allow-popups" '
                'style="width: 100%%; height: %dpx; border: 1px solid #d0d7de; border-radius: 4px"></iframe>'
                % (html.escape(self.dump_dir), html.escape(self.html, quote=True), self.height))

    def save(self):
        """Writes DUMP_DIR/index.html (as `depyf report` does); returns its path."""
        return build.write_report(self.dump_dir)

    def __repr__(self):
        return "<depyf report of %s: display it in Jupyter, or open %s>" % (
            self.dump_dir, os.path.join(self.dump_dir, build.INDEX))


def show(dump_dir, height=640):
    """The report of the dump that depyf.prepare_debug wrote into `dump_dir`, shown
    inline when it is the value of a notebook cell (or passed to IPython's display)."""
    return ReportView(dump_dir, height)
