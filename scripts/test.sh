#!/usr/bin/env bash
# The test suite, as CI runs it (.ci/run → make test → this script).
# Starts or checks what the tests need: PostgreSQL on 127.0.0.1:5432, the
# pinned dynalite from package-lock.json (the tests start dynalite
# themselves, on a free loopback port) and Debian's chromium (the HTML
# report is checked in headless Chromium).
set -euo pipefail
cd "$(dirname "$0")/.."

PGHOST_CHECK=${PGHOST:-127.0.0.1}
PGPORT_CHECK=${PGPORT:-5432}
if ! pg_isready -q -h "$PGHOST_CHECK" -p "$PGPORT_CHECK"; then
  if command -v pg_ctlcluster >/dev/null 2>&1 && [ -d /etc/postgresql ]; then
    echo "starting PostgreSQL" >&2
    pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | head -n1)" main start
  fi
  for _ in $(seq 1 30); do
    pg_isready -q -h "$PGHOST_CHECK" -p "$PGPORT_CHECK" && break
    sleep 1
  done
  pg_isready -h "$PGHOST_CHECK" -p "$PGPORT_CHECK" || {
    echo "PostgreSQL is not reachable at $PGHOST_CHECK:$PGPORT_CHECK" >&2
    exit 1
  }
fi

# The HTML report test opens the page in Debian's headless Chromium.
if ! command -v chromium >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "installing chromium (for the HTML report test)" >&2
    apt-get install -y --no-install-recommends chromium >/dev/null || { apt-get update >/dev/null && apt-get install -y --no-install-recommends chromium >/dev/null; }
  else
    echo "chromium is missing: install Debian's chromium package (or set PG2DYNAMO_SKIP_BROWSER=1 to skip the HTML check)" >&2
    exit 1
  fi
fi

if [ ! -f node_modules/dynalite/cli.js ]; then
  npm ci --no-audit --no-fund
fi

go vet ./...
# -timeout: the app package alone takes 8–9 minutes under -race here, near
# go test's default of 10 minutes per package.
go test -race -count=1 -timeout 30m ./...
# Brief fuzzing of the parsers (the seed corpus in testdata/fuzz runs above).
go test -run='^$' -fuzz='^FuzzParseTemplate$' -fuzztime=10s -fuzzminimizetime=1s ./mapping
go test -run='^$' -fuzz='^FuzzParse$' -fuzztime=10s -fuzzminimizetime=1s ./mapping
