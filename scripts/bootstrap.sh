# Sourced by run.sh and test.sh: make .venv (Python >= 3.11) and install the
# project into it when pyproject.toml changed since the last install.
# Usage: . scripts/bootstrap.sh EXTRAS   (EXTRAS: "" or "dev")
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
extras=${1:-}
venv="$root/.venv"

find_python() {
    for py in "${PYTHON:-}" python3.13 python3.12 python3.11 python3; do
        [ -n "$py" ] || continue
        if command -v "$py" >/dev/null 2>&1 &&
            "$py" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
            echo "$py"
            return 0
        fi
    done
    echo "reverie needs Python 3.11 or newer; none found (set PYTHON=...)" >&2
    return 1
}

if [ ! -x "$venv/bin/python" ]; then
    py=$(find_python)
    echo "creating $venv with $py" >&2
    "$py" -m venv "$venv"
    "$venv/bin/python" -m pip install --quiet --upgrade pip >&2
fi

stamp="$venv/.install-stamp${extras:+-$extras}"
want=$(sha256sum "$root/pyproject.toml" | cut -d' ' -f1)
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
    echo "installing reverie${extras:+[$extras]} into $venv" >&2
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check \
        -e "$root${extras:+[$extras]}" >&2
    echo "$want" >"$stamp"
fi
export PATH="$venv/bin:$PATH"
