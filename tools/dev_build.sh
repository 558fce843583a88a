#!/usr/bin/env bash
# Developer build: compiles the extension with meson for the given Python
# (default: python3) and copies it into ./depyf so that `python -c "import
# depyf"` works from the checkout without installing.
#   tools/dev_build.sh [PYTHON] [extra meson setup args, e.g. -Db_sanitize=address,undefined]
# DEV_BUILD_SUFFIX names a private build directory (parallel builds).
set -euo pipefail
PY=${1:-python3}
shift || true
# (a relative path to the interpreter is the caller's, resolved before the cd)
case $PY in */*) PY=$(cd "$(dirname "$PY")" && pwd)/$(basename "$PY") ;; esac
cd "$(dirname "$0")/.."
tag=$("$PY" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
bdir=build/dev-$tag${DEV_BUILD_SUFFIX:-}
if [ ! -f "$bdir/build.ninja" ]; then
    mkdir -p "$bdir"
    # meson builds for the interpreter named in a native file, whichever
    # Python runs meson itself
    printf "[binaries]\npython = '%s'\n" "$(command -v "$PY" || echo "$PY")" > "$bdir.native"
    meson setup "$bdir" --native-file "$bdir.native" "$@" >/dev/null
fi
if ! out=$(ninja -C "$bdir" 2>&1); then
    printf '%s\n' "$out" | grep -E "error|Error" >&2 || printf '%s\n' "$out" >&2
    exit 1
fi
so=$(find "$bdir" -maxdepth 1 -name '_core*.so' | head -n1)
# copy then rename: never overwrite a .so another process has loaded
cp "$so" "depyf/.$(basename "$so").tmp.$$"
mv -f "depyf/.$(basename "$so").tmp.$$" "depyf/$(basename "$so")"
echo "built $so -> depyf/"
