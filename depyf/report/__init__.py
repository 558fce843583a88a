"""`depyf report`: one static HTML page showing everything torch.compile did.

`write_report(dump_dir)` reads a dump written by depyf.prepare_debug (its
`depyf_manifest.json` and files, or the `rank_<r>/` directories of a
distributed run) and writes `dump_dir/index.html`.  The page is
self-contained: no server, no network, it opens from file://.  Importing this
package never imports torch.
"""

from depyf.report.build import write_report

__all__ = ["write_report"]
