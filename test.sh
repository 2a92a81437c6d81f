#!/usr/bin/env bash
# Reverie's test command.  Sets itself up on first use (.venv with the dev
# extras), then lints, type-checks, checks the layering (import-linter, its
# contracts in pyproject.toml) and runs the test suite.  Extra arguments
# go to pytest, e.g. ./test.sh -k search.
set -euo pipefail
cd "$(dirname "$0")"
. scripts/bootstrap.sh dev
ruff check .
ruff format --check .
mypy
lint-imports --no-cache
exec python -m pytest "$@"
