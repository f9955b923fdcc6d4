#!/usr/bin/env bash
# The test suite, as CI runs it (.ci/run → make test → this script).
# Starts or checks what the tests need: PostgreSQL (scripts/postgres.sh:
# the server on PGHOST:PGPORT, default 127.0.0.1:5432, started, created or
# installed when there is none; PG2DYNAMO_TEST_PG instead names a server of
# your own, checked, never started or changed), the pinned dynalite from
# package-lock.json (the tests start dynalite themselves, on a free
# loopback port), Debian's chromium (the HTML report is checked in headless
# Chromium) and Debian's docker-compose (it validates docker-compose.yml
# without a Docker engine).
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/postgres.sh
source scripts/postgres.sh

if [[ -n ${PG2DYNAMO_TEST_PG:-} ]]; then
  pg_isready -q -d "$PG2DYNAMO_TEST_PG" -t 5 || {
    echo "PostgreSQL at PG2DYNAMO_TEST_PG does not answer (pg_isready)" >&2
    exit 1
  }
  POSTGRES_ADMIN_URL=$PG2DYNAMO_TEST_PG
else
  postgres_ensure || exit 1
  # The tests reach the server through testenv.AdminURL, which this
  # overrides: postgres_ensure may have found or made it on another port.
  PG2DYNAMO_TEST_PG=$(postgres_url postgres)
  export PG2DYNAMO_TEST_PG
fi

# migrate --follow's tests stream from logical replication slots, which
# need wal_level=logical (the default is replica; changing it takes a
# restart). The follow and app tests run side by side, each follow with
# its slot and walsender and each verify of a followed table with a
# temporary one: the default 10 slots and walsenders ran out once
# ("all replication slots are in use"), so the suite asks for 40 of each.
# Set on the local cluster when it is not so (postgres_logical).
postgres_logical || exit 1

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
go -C tools vet ./...
# The product's tests import tools/ through go.work; the product itself
# must build without it, as `go install` builds it.
GOWORK=off go build ./...

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
# The collision test runs in both: ten runs without -race (the same loser
# every time), three under it (its parallel readers under the detector).
APP_RACE_ONLY='^(TestMigrateInterrupted|TestSecondSignalExits|TestResumeKeepsDuplicateCheck|TestResumeByteaKey|TestMigrateThroughFaults|TestPermanentErrorsStopFast|TestRetryDeadline|TestCheckpointOneRunAtATime|TestVerifyWaitsForGSILag)$'
# The three runs go side by side (each in a log, printed when all are
# done), and app's parallel tests four at a time (-parallel 4; the default
# is one per CPU): most of them wait on their dynalite, PostgreSQL or a
# process. app without -race took 130 s with -parallel 2, 78 s with 4.
#   - transform's two whole-fixture comparisons (every row of a scaled
#     fixture through the builder against a reference derivation, on one
#     goroutine) took 97 s and 20 s under -race beside the other runs and
#     hold no concurrency: they run without it (SLOW_SERIAL_TESTS), after
#     the race run, and -race runs the rest of transform;
#   - the app run skips APP_RACE_ONLY: APP_RACE_TESTS but the collision test.
SLOW_SERIAL_TESTS='^(TestBuilderMatchesReference|TestBuilderItemsStayIntact)$'
#   - the packages that start no goroutine and share nothing between them,
#     in their code or their tests (the mapping parser, the design drafts,
#     the report, and the checks of docs, compose file, code and scripts),
#     run without -race: the detector has nothing to find there, and under
#     it they took 153 s of the race run's package walls (2026-11-30, a
#     2-core machine that this script keeps busy from start to end).
NO_RACE_PACKAGES='/(mapping|draft|report|internal/docscheck|internal/composecheck|internal/codecheck|internal/scriptcheck)$'
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
# golangci-lint (.golangci.yml) beside the tests: the version pinned in
# tools/lint/go.mod, a module of its own outside go.work (GOWORK=off), so
# that its dependencies stay out of the product's build; go tool builds it
# once into Go's build cache
# (go tool -n prints its path), and its analyses are cached too
# (~/.cache/golangci-lint), so a run after the first reads only the
# packages that changed. Another golangci-lint running on the machine
# holds its lock: this one waits for it (--allow-serial-runners). The
# tools module (tools/: the tests' support, make bench, the demo's helper,
# the mapping's schema generator) is linted in the same step, and its
# tests run beside it.
# step NAME CMD… lists NAME in $logs/steps as it starts, runs CMD into
# $logs/NAME and records its exit status and the second of the run it ended
# at ($logs/NAME.end), for the report below: a listed step without an end
# counts as failed.
step() {
  local name=$1 rc=0
  shift
  echo "$name" >>"$logs/steps"
  "$@" >"$logs/$name" 2>&1 || rc=$?
  echo "$rc $SECONDS" >"$logs/$name.end"
  return 0
}
lint() {
  local lint
  lint=$(GOWORK=off go -C tools/lint tool -n golangci-lint) || {
    echo "could not build golangci-lint from tools/lint/go.mod (GOWORK=off go -C tools/lint tool -n golangci-lint)"
    return 1
  }
  "$lint" run --allow-serial-runners ./... &&
    (cd tools && "$lint" run --allow-serial-runners ./...)
}
# Brief fuzzing of the parsers (the seed corpus in testdata/fuzz runs with
# mapping's tests), each for a number of inputs: about 10 s each on a quiet machine
# of 2 cores (measured 2026-11: FuzzParseTemplate's 100,000 in 10-11 s,
# FuzzParse's 6,000 in 8-12 s). Not for a time: with -fuzztime=10s, Go
# 1.26's fuzz coordinator can report its own deadline as a failure
# ("context deadline exceeded", no failing input) when a worker is slow to
# stop, which a busy machine made happen (https://go.dev/issue/75804, fixed
# in Go 1.27); a count sets no deadline.
#
# The steps after the race run (the serial transform tests, the packages
# without -race, the fuzzing) go on beside the app run, which ends last,
# rather than after it.
step lint lint &
step tools go -C tools test -race -count=1 ./... &
{
  step race go test -race -count=1 -timeout 30m -skip "$SLOW_SERIAL_TESTS" $(go list ./... | grep -v -E -e '/(app|follow)$' -e "$NO_RACE_PACKAGES")
  step serial go test -count=1 -timeout 30m -run "$SLOW_SERIAL_TESTS" ./transform
  step no-race go test -count=1 -timeout 30m $(go list ./... | grep -E "$NO_RACE_PACKAGES")
  step fuzz1 go test -run='^$' -fuzz='^FuzzParseTemplate$' -fuzztime=100000x -fuzzminimizetime=1s ./mapping
  step fuzz2 go test -run='^$' -fuzz='^FuzzParse$' -fuzztime=6000x -fuzzminimizetime=1s ./mapping
} &
step app go test -count=1 -timeout 30m -parallel 4 -skip "$APP_RACE_ONLY" ./app ./follow &
# -parallel 1: two in-process runs at once race in urfave/cli itself,
# whose --help flag (cli.HelpFlag) is one package-level value every app's
# flag set writes when it parses (pg2dynamo's own flags are made per app);
# only a test binary running several CLIs at once meets it.
step app-race go test -race -count=1 -timeout 30m -parallel 1 -run "$APP_RACE_TESTS" ./app &
wait
status=0
while read -r name; do
  read -r rc at <"$logs/$name.end" || { rc=1 at=?; }
  echo "== $name (exit $rc, ended at ${at} s)"
  cat "$logs/$name" 2>/dev/null || true
  if [ "$rc" != 0 ]; then
    status=1
    if [ "$name" = lint ]; then
      echo "golangci-lint failed (above): fix each finding at its cause; where one is wrong, mark its line //nolint:LINTER // why (.golangci.yml says which linters run)" >&2
    fi
  fi
done <"$logs/steps"
exit $status
