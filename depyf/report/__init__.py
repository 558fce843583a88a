"""`depyf report`: one static HTML page showing everything torch.compile did.

`write_report(dump_dir)` reads a dump written by depyf.prepare_debug (its
`depyf_manifest.json` and files, or the `rank_<r>/` directories of a
distributed run) and writes `dump_dir/index.html`.  The page is
self-contained: no server, no network, it opens from file://.  Importing this
package never imports torch.
"""

__all__ = ["write_report"]


def __getattr__(name):
    # The builder loads when a report is written: the dumper imports this package
    # (for `record`) when a block starts, and objects made then fill the garbage
    # collector's oldest generation during the compile that follows.
    if name == "write_report":
        from depyf.report.build import write_report
        return write_report
    raise AttributeError("module %r has no attribute %r" % (__name__, name))
