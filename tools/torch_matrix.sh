#!/usr/bin/env bash
# The torch suite (tests/torch) against torch releases from PyPI, one
# combination at a time, each in its own venv that is deleted after use
# (PyPI's Linux torch carries 3-5 GB of CUDA packages; it runs on the CPU).
#   tools/torch_matrix.sh PY:TORCH ...     e.g. tools/torch_matrix.sh 3.11:2.6.0 3.12:2.13.0
# PY is a CPython minor version (pyenv's interpreter, else python3.X on PATH).
# Prints one line per combination: install and test times, pytest's summary.
# Not part of tools/test.sh: it downloads.  This machine's pip is capped at
# torch <= 2.14.1 (/etc/xdg/pip); the cap is lifted for these venvs only.
set -uo pipefail
cd "$(dirname "$0")/.."
# Every combination tests one snapshot of the committed tree (HEAD when started), so that
# work on the checkout meanwhile changes nothing in a run; uncommitted changes are not in it.
commit=$(git rev-parse --short HEAD) || exit 2
root=$(mktemp -d "${TMPDIR:-/tmp}/depyf-matrix-src-XXXX")
trap 'rm -rf "$root"' EXIT
git archive HEAD | tar -x -C "$root" || exit 2
export PIP_CONSTRAINT=/dev/null  # (an empty constraints file in place of the machine's cap)

find_python() {
    local minor=$1 py
    for py in $(ls -d "${PYENV_ROOT:-$HOME/.pyenv}"/versions/"$minor".*/bin/python 2>/dev/null) \
              $(command -v "python$minor" 2>/dev/null); do
        if "$py" -c 'import sys; sys.exit("%d.%d" % sys.version_info[:2] != "'"$minor"'")' 2>/dev/null; then
            echo "$py"
            return 0
        fi
    done
    return 1
}

echo "depyf at $commit"
printf '%-7s %-8s %9s %9s  %s\n' python torch install tests result
for combo in "$@"; do
    minor=${combo%%:*} release=${combo#*:}
    if ! py=$(find_python "$minor"); then
        printf '%-7s %-8s %9s %9s  %s\n' "$minor" "$release" - - "skipped: no Python $minor here"
        continue
    fi
    venv=$(mktemp -d "${TMPDIR:-/tmp}/depyf-torch-$minor-$release-XXXX")
    log="$venv.log"
    t0=$(date +%s)
    if ! { "$py" -m venv "$venv" && "$venv/bin/python" -m pip install -q "torch==$release" pytest debugpy \
            tabulate 'selenium>=4.10' && "$venv/bin/python" -m pip install -q "$root"; } >"$log" 2>&1; then
        printf '%-7s %-8s %8ss %9s  %s\n' "$minor" "$release" $(( $(date +%s) - t0 )) - \
            "install failed: $(grep -m1 -E 'ERROR|error' "$log")"
        rm -rf "$venv"
        continue
    fi
    t1=$(date +%s)
    # (from outside the checkout: the installed depyf is tested, not ./depyf)
    (cd "$venv" && PYTHONSAFEPATH=1 "$venv/bin/python" -m pytest -q -p no:cacheprovider "$root/tests/torch") \
        >>"$log" 2>&1
    t2=$(date +%s)
    summary=$(grep -E '^[0-9]+ (passed|failed)|^=+ .*(passed|failed|error)' "$log" | tail -n1 | tr -d '=' | xargs)
    printf '%-7s %-8s %8ss %8ss  %s\n' "$minor" "$release" $((t1 - t0)) $((t2 - t1)) "${summary:-no summary (see $log)}"
    rm -rf "$venv"
done
