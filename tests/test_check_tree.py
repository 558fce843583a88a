"""tests/check_tree.py, the whole-module differential check of a source
tree: a tree of real modules comes back identical or proven, and the check
itself tells a wrong or broken output from a right one."""
import os
import textwrap

import check_tree
from depyf import _core

MODULES = {
    "pkg/shapes.py": """
        import math
        LIMIT = 3

        class Box:
            def __init__(self, w, h):
                self.w, self.h = w, h

            def area(self):
                return self.w * self.h if self.w > 0 else 0

        def walk(items):
            total = 0
            for x in items:
                try:
                    total += math.sqrt(x)
                except ValueError:
                    continue
            return total
    """,
    "top.py": """
        def pick(d, key):
            with open(key) as f:
                return d.get(f.read(), LIMIT)
        LIMIT = {'a': 1}
    """,
}


def write_tree(root, files):
    for rel, text in files.items():
        path = os.path.join(root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(textwrap.dedent(text))


def test_a_tree_of_modules_comes_back_identical_or_proven(tmp_path):
    write_tree(str(tmp_path / "src"), MODULES)
    batch, counts, details = check_tree.run(str(tmp_path / "src"), str(tmp_path / "out"), 1)
    assert batch.returncode == 0, batch.stderr
    assert counts["identical"] + counts["proven"] == len(MODULES), details
    assert os.path.exists(tmp_path / "out" / "pkg" / "shapes.py")


def test_the_check_tells_wrong_and_broken_outputs(tmp_path):
    write_tree(str(tmp_path / "src"), {"m.py": "def f(x):\n    return x + 1\n"})
    src = str(tmp_path / "src" / "m.py")
    cases = {
        "identical": "def f(x):\n    return x + 1\n",
        "refuted": "def f(x):\n    return x - 1\n",
        "uncompilable": "def f(x):\n    return x +\n",
    }
    for want, text in cases.items():
        write_tree(str(tmp_path / want), {"m.py": text})
        outcome, _detail = check_tree.check_module(src, str(tmp_path / want / "m.py"), _core.equivalent)
        assert outcome == want
    assert check_tree.check_module(src, str(tmp_path / "none.py"), _core.equivalent)[0] == "failed"
