#!/usr/bin/env bash
# Developer build: compiles the extension with meson for the given Python
# (default: python3) and copies it into ./depyf so that `python -c "import
# depyf"` works from the checkout without installing.
#   tools/dev_build.sh [PYTHON] [extra meson setup args, e.g. -Db_sanitize=address,undefined]
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${1:-python3}
shift || true
tag=$("$PY" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
bdir=build/dev-$tag${DEV_BUILD_SUFFIX:-}
if [ ! -f "$bdir/build.ninja" ]; then
    "$PY" -m mesonbuild.mesonmain setup "$bdir" -Dpython.install_env=auto --python.bytecompile=-1 "$@" >/dev/null 2>&1 \
      || meson setup "$bdir" -Dpython.install_env=auto "$@" >/dev/null
fi
ninja -C "$bdir" >/dev/null
so=$(find "$bdir" -maxdepth 1 -name '_core*.so' | head -n1)
# copy then rename: never overwrite a .so another process has loaded
cp "$so" "depyf/.$(basename "$so").tmp.$$"
mv -f "depyf/.$(basename "$so").tmp.$$" "depyf/$(basename "$so")"
echo "built $so -> depyf/"
