#!/usr/bin/env bash
# Reverie's test command.  Sets itself up on first use (.venv with the dev
# extras), then lints, type-checks, checks the layering (import-linter, its
# contracts in pyproject.toml) and runs the test suite, in as many processes as
# the machine has cores (at most four; pytest-xdist).  Extra arguments go to
# pytest, e.g. ./test.sh -k search, or ./test.sh -n 0 for one process.
set -euo pipefail
cd "$(dirname "$0")"
. scripts/bootstrap.sh dev
ruff check .
ruff format --check .
mypy
lint-imports --no-cache
cores=$(nproc 2>/dev/null || echo 1)
exec python -m pytest -n "$((cores < 4 ? cores : 4))" "$@"
