#!/usr/bin/env bash
# The test suite, as CI runs it (.ci/run → make test → this script).
# Starts or checks what the tests need: PostgreSQL on 127.0.0.1:5432, the
# pinned dynalite from package-lock.json (the tests start dynalite
# themselves, on a free loopback port), Debian's chromium (the HTML
# report is checked in headless Chromium) and Debian's docker-compose (it
# validates docker-compose.yml without a Docker engine).
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

# migrate --follow's tests stream from logical replication slots, which
# need wal_level=logical (the default is replica; changing it takes a
# restart). The follow and app tests run side by side, each follow with
# its slot and walsender and each verify of a followed table with a
# temporary one: the default 10 slots and walsenders ran out once
# ("all replication slots are in use"), so the suite asks for 40 of each.
# Set on the local cluster when it is not so.
PSQL=(psql -X -q -At -h "$PGHOST_CHECK" -p "$PGPORT_CHECK" -U "${PGUSER:-postgres}" -d postgres)
level=$("${PSQL[@]}" -c 'SHOW wal_level')
slots=$("${PSQL[@]}" -c 'SHOW max_replication_slots')
senders=$("${PSQL[@]}" -c 'SHOW max_wal_senders')
# Only the settings that fall short change (a cluster with 100 slots keeps
# them); each is named with its old and new value.
changes=() statements=()
if [ "$level" != logical ]; then
  changes+=("wal_level from $level to logical")
  statements+=(-c 'ALTER SYSTEM SET wal_level = logical')
fi
if [ "$slots" -lt 40 ]; then
  changes+=("max_replication_slots from $slots to 40")
  statements+=(-c 'ALTER SYSTEM SET max_replication_slots = 40')
fi
if [ "$senders" -lt 40 ]; then
  changes+=("max_wal_senders from $senders to 40")
  statements+=(-c 'ALTER SYSTEM SET max_wal_senders = 40')
fi
if [ ${#changes[@]} -gt 0 ]; then
  list=$(printf '%s, ' "${changes[@]}")
  list=${list%, }
  if command -v pg_ctlcluster >/dev/null 2>&1 && [ -d /etc/postgresql ]; then
    echo "setting PostgreSQL's $list (ALTER SYSTEM, for the follow tests) and restarting the cluster" >&2
    "${PSQL[@]}" "${statements[@]}"
    pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | head -n1)" main restart
    for _ in $(seq 1 30); do
      pg_isready -q -h "$PGHOST_CHECK" -p "$PGPORT_CHECK" && break
      sleep 1
    done
    now="$("${PSQL[@]}" -c 'SHOW wal_level') $("${PSQL[@]}" -c 'SHOW max_replication_slots') $("${PSQL[@]}" -c 'SHOW max_wal_senders')"
    read -r level slots senders <<<"$now"
    if [ "$level" != logical ] || [ "$slots" -lt 40 ] || [ "$senders" -lt 40 ]; then
      echo "after the restart, wal_level is $level, max_replication_slots $slots, max_wal_senders $senders: the follow tests need logical and 40 of each" >&2
      exit 1
    fi
  else
    echo "PostgreSQL's settings fall short of the follow tests' (wal_level logical, max_replication_slots and max_wal_senders 40): change $list (ALTER SYSTEM SET …), then restart the server" >&2
    exit 1
  fi
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

# internal/composecheck validates docker-compose.yml with `docker compose
# config`, or Debian's docker-compose, which needs no Docker engine
# (PG2DYNAMO_SKIP_COMPOSE=1 skips that test instead).
if [ -z "${PG2DYNAMO_SKIP_COMPOSE:-}" ] && ! command -v docker-compose >/dev/null 2>&1 && ! docker compose version >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "installing docker-compose (for the compose file test)" >&2
    apt-get install -y --no-install-recommends docker-compose >/dev/null || { apt-get update >/dev/null && apt-get install -y --no-install-recommends docker-compose >/dev/null; }
  else
    echo "docker-compose is missing: install Debian's docker-compose package (or set PG2DYNAMO_SKIP_COMPOSE=1 to skip the compose check)" >&2
    exit 1
  fi
fi

# The npm packages of package.json (dynalite, and the single-table
# libraries the preset tests read the table back with): npm ci when one is
# missing.
for pkg in dynalite dynamodb-onetable electrodb dynamodb-toolbox @aws-sdk/client-dynamodb @aws-sdk/lib-dynamodb; do
  if [ ! -f "node_modules/$pkg/package.json" ]; then
    npm ci --no-audit --no-fund
    break
  fi
done

unformatted=$(gofmt -l $(git ls-files '*.go'))
if [ -n "$unformatted" ]; then
  echo "gofmt would change these files (run gofmt -w):" >&2
  echo "$unformatted" >&2
  exit 1
fi
go vet ./...

# What runs under the race detector, by the numbers (2 CPUs, measured
# 2026-11, go test -json): the app package's end-to-end tests took 257 s
# under -race and 130 s without, the same tests, in parallel. They run the
# whole CLI against real PostgreSQL and dynalite, mostly to check what ends
# up in the table; the race detector there mainly slows the transform and
# the readers 2-5x. So:
#   - every package but app runs under -race, as before: the pipeline's
#     concurrency (readers, batcher, writers, acknowledger, stopper), the
#     sinks, verify and follow have their unit tests there;
#   - app runs without -race (the processes its tests start are
#     built without -race anyway), and so does follow, whose end-to-end
#     tests drive the CLI the same way (10,000 changes on four domains,
#     SIGKILLs of real processes);
#   - and the app tests that drive that concurrency in-process through the
#     CLI run again under -race (APP_RACE_TESTS): cancellation and signals
#     mid-run, progress output, resumes, parallel readers split into ranges
#     with the run-wide duplicate check, SDK retries and UnprocessedItems
#     re-sends from eight writers, a permanent error or a lost source
#     connection stopping the writers, the retry deadline, the checkpoint
#     lock and verify's GSI re-reads.
APP_RACE_TESTS='^(TestMigrateInterrupted|TestSecondSignalExits|TestResumeKeepsDuplicateCheck|TestResumeByteaKey|TestCollisionLoserIsDeterministic|TestMigrateThroughFaults|TestPermanentErrorsStopFast|TestRetryDeadline|TestCheckpointOneRunAtATime|TestVerifyWaitsForGSILag)$'
# The three runs go side by side (each in a log, printed when all are
# done), and app's parallel tests four at a time (-parallel 4; the default
# is one per CPU): most of them wait on their dynalite, PostgreSQL or a
# process. app without -race took 130 s with -parallel 2, 78 s with 4.
#   - transform's two whole-fixture comparisons (every row of a scaled
#     fixture through the builder against a reference derivation, on one
#     goroutine) took 97 s and 20 s under -race beside the other runs and
#     hold no concurrency: they run without it (SLOW_SERIAL_TESTS), in the
#     app run's process list, and -race runs the rest of transform;
#   - the app run skips APP_RACE_TESTS, which run under -race anyway.
SLOW_SERIAL_TESTS='^(TestBuilderMatchesReference|TestBuilderItemsStayIntact)$'
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
go test -race -count=1 -timeout 30m -skip "$SLOW_SERIAL_TESTS" $(go list ./... | grep -v -e '/app$' -e '/follow$') >"$logs/race" 2>&1 & race=$!
{ go test -count=1 -timeout 30m -parallel 4 -skip "$APP_RACE_TESTS" ./app ./follow &&
  go test -count=1 -timeout 30m -run "$SLOW_SERIAL_TESTS" ./transform; } >"$logs/app" 2>&1 & app=$!
# -parallel 1: two in-process runs at once race in urfave/cli itself,
# whose --help flag (cli.HelpFlag) is one package-level value every app's
# flag set writes when it parses (pg2dynamo's own flags are made per app);
# only a test binary running several CLIs at once meets it.
go test -race -count=1 -timeout 30m -parallel 1 -run "$APP_RACE_TESTS" ./app >"$logs/app-race" 2>&1 & apprace=$!
status=0
for run in race:$race app:$app app-race:$apprace; do
  wait "${run#*:}" || status=1
  echo "== go test (${run%%:*})"
  cat "$logs/${run%%:*}"
done
[ "$status" = 0 ] || exit 1

# Brief fuzzing of the parsers (the seed corpus in testdata/fuzz runs
# above), 10 s each, both at once.
go test -run='^$' -fuzz='^FuzzParseTemplate$' -fuzztime=10s -fuzzminimizetime=1s ./mapping >"$logs/fuzz1" 2>&1 & f1=$!
go test -run='^$' -fuzz='^FuzzParse$' -fuzztime=10s -fuzzminimizetime=1s ./mapping >"$logs/fuzz2" 2>&1 & f2=$!
wait $f1 || status=1
cat "$logs/fuzz1"
wait $f2 || status=1
cat "$logs/fuzz2"
exit $status
