# Sourced by tools/run_example.sh and tools/test.sh.
# make_venv DIR [PYTHON]: creates the venv DIR with PYTHON (default: Python
# 3.11, or DEPYF_PYTHON), or recreates it when it holds another version or is
# broken.
DEPYF_PYTHON=${DEPYF_PYTHON:-python3.11}

make_venv() {
    local dir=$1 py=${2:-$DEPYF_PYTHON}
    if ! command -v "$py" >/dev/null; then
        echo "error: $py not found; set DEPYF_PYTHON to a Python 3.11 interpreter" >&2
        return 1
    fi
    local want have
    want=$("$py" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
    have=$("$dir/bin/python" -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null || true)
    if [ "$have" != "$want" ]; then
        rm -rf "$dir"
        "$py" -m venv "$dir"
    fi
}

# other_pythons: one interpreter per supported version other than 3.11 that
# this machine has and that runs (pyenv's, else python3.X on PATH), one path
# per line.
other_pythons() {
    local minor py
    for minor in 8 9 10 12 13; do
        for py in $(ls -d "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3."$minor".*/bin/python 2>/dev/null) \
                  $(command -v "python3.$minor" 2>/dev/null); do
            if "$py" -c 'import sys; sys.exit(sys.version_info[:2] != (3, '"$minor"'))' 2>/dev/null; then
                echo "$py"
                break
            fi
        done
    done
}
