# Sourced by tools/run_example.sh and tools/test.sh.
# make_venv DIR: creates the venv DIR with Python 3.11 (DEPYF_PYTHON picks the
# interpreter), or recreates it when it holds another version or is broken.
DEPYF_PYTHON=${DEPYF_PYTHON:-python3.11}

make_venv() {
    local dir=$1
    if ! command -v "$DEPYF_PYTHON" >/dev/null; then
        echo "error: $DEPYF_PYTHON not found; set DEPYF_PYTHON to a Python 3.11 interpreter" >&2
        return 1
    fi
    local want have
    want=$("$DEPYF_PYTHON" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
    have=$("$dir/bin/python" -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null || true)
    if [ "$have" != "$want" ]; then
        rm -rf "$dir"
        "$DEPYF_PYTHON" -m venv "$dir"
    fi
}
