"""depyf.show(dump_dir) in a notebook: the value Jupyter displays (`_repr_html_`) is the
report page in a sandboxed iframe's srcdoc.  tests/torch/test_notebook_display.py shows
it in a real browser."""

import html.parser
import json
import subprocess
import sys

import pytest

import depyf
from depyf.report import build


def make_dump(path):
    """A dump without manifest (the report falls back on the file names)."""
    path.mkdir()
    (path / "full_code_for_toy_example_0.py").write_text("# guards, source, transformed code\n")
    (path / "__transformed_code_0_for_toy_example.py").write_text(
        "def __transformed_code_0_for_toy_example(a, b):\n    return __compiled_fn_1(a, b)\n")
    (path / "__compiled_fn_1.Captured_Graph.0.py").write_text("class GraphModule:\n    pass\n")
    return path


class Frames(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.frames = []

    def handle_starttag(self, tag, attrs):
        self.frames.append((tag, dict(attrs)))


def test_show_displays_the_report_page_in_a_sandboxed_frame(tmp_path):
    dump = make_dump(tmp_path / "dump")
    view = depyf.show(dump, height=500)
    parser = Frames()
    parser.feed(view._repr_html_())
    [(tag, attrs)] = parser.frames
    assert tag == "iframe"
    assert attrs["sandbox"] == "allow-scripts allow-popups"  # no allow-same-origin
    assert "height: 500px" in attrs["style"]
    page = attrs["srcdoc"]  # the attribute, unescaped, is the whole page
    assert page == view.html and page.startswith("<!DOCTYPE html>")
    data = json.loads(page.split('<script type="application/json" id="depyf-data">')[1].split("</script>")[0])
    [run] = data["runs"]
    assert sorted(f["name"] for f in run["files"]) == sorted(p.name for p in dump.iterdir())
    assert not (dump / "index.html").exists()  # showing writes nothing
    assert view.save() == str(dump / "index.html") and (dump / "index.html").exists()
    assert str(dump) in repr(view)


def test_show_of_a_missing_directory_says_so(tmp_path):
    with pytest.raises(build.ReportError, match="not a directory"):
        depyf.show(tmp_path / "nowhere")


def test_show_does_not_import_torch():
    check = "import sys, depyf; depyf.show; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", check], capture_output=True, text=True, check=True,
                         cwd=str(__import__("os").path.dirname(__import__("os").path.dirname(depyf.__file__))))
    assert out.stdout.strip() == "False"
