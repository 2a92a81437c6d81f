#!/usr/bin/env bash
# Reverie's main command.  Sets itself up on first use (.venv, install), then
# runs memctl: with no arguments the main job, `memctl up`, on the embedded
# default (SQLite brain in the user-data folder, in-process workers, API on
# 127.0.0.1:8420, no services needed); otherwise any memctl command, e.g.
# ./run.sh demo or ./run.sh search "dark mode".
set -euo pipefail
cd "$(dirname "$0")"
. scripts/bootstrap.sh ""
if [ $# -eq 0 ]; then
    set -- up
fi
exec memctl "$@"
