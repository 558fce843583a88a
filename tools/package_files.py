"""Prints the files of the depyf package that a wheel installs (meson.build runs it).

Everything below depyf/ except what a build or a run leaves there: a developer
build's extension (tools/dev_build.sh copies _core*.so into depyf/), caches,
hidden and temporary files.  The extension itself is installed by meson.
"""

import os
import sys

LEFT_BY_BUILDS_AND_RUNS = (".so", ".pyd", ".dll", ".dylib", ".pyc", ".pyo", ".tmp", "~")


def package_files(root):
    found = []
    for directory, dirs, files in os.walk(os.path.join(root, "depyf")):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d != "__pycache__")
        for name in sorted(files):
            if not name.startswith(".") and not name.endswith(LEFT_BY_BUILDS_AND_RUNS):
                found.append(os.path.relpath(os.path.join(directory, name), root).replace(os.sep, "/"))
    return found


if __name__ == "__main__":
    print("\n".join(package_files(sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.dirname(
        os.path.abspath(__file__))))))
