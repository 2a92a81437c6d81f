#!/usr/bin/env bash
# Reverie's test command.  Sets itself up on first use (.venv with the dev
# extras), then lints, type-checks and runs the test suite.  Extra arguments
# go to pytest, e.g. ./test.sh -k search.
set -euo pipefail
cd "$(dirname "$0")"
. scripts/bootstrap.sh dev
ruff check .
ruff format --check .
mypy
exec python -m pytest "$@"
