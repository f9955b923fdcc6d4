#!/usr/bin/env bash
# make bench: checks PostgreSQL, installs the pinned dynalite from
# package-lock.json if missing (npm ci), then builds the suite (tools/bench,
# in the tools module) and runs it from the repository's root with the
# flags given (make bench BENCH_FLAGS="-rows 200000 -flat-rows 0", or
# scripts/bench.sh -rows 200000 -flat-rows 0; -h lists them).
set -euo pipefail
cd "$(dirname "$0")/.."

PGHOST_CHECK=${PGHOST:-127.0.0.1}
PGPORT_CHECK=${PGPORT:-5432}
if ! pg_isready -q -h "$PGHOST_CHECK" -p "$PGPORT_CHECK"; then
  echo "PostgreSQL is not reachable at $PGHOST_CHECK:$PGPORT_CHECK (make test starts it)" >&2
  exit 1
fi

if [ ! -f node_modules/dynalite/cli.js ]; then
  npm ci --no-audit --no-fund
fi

mkdir -p bench-out
go -C tools build -o "$PWD/bench-out/bench" ./bench
exec bench-out/bench "$@"
