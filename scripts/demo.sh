#!/usr/bin/env bash
#
# demo.sh: load the sample databases into PostgreSQL and migrate each into its
# own DynamoDB table, end to end. `make demo` runs it on a machine without
# Docker (the native mirror of docker-compose.yml, whose migrate service runs
# this same script inside the image).
#
# Needs: a PostgreSQL server (trust auth, or PGPASSWORD), psql/createdb/dropdb,
# and either Node.js (dynalite is started in memory on a free loopback port)
# or DYNAMODB_ENDPOINT pointing at a running DynamoDB Local.
#
# Steps: for each fixture domain (customers, tickets, attendance): (re)create
# database pg2dynamo_demo_<domain>, `pg2dynamo fixtures load`, `pg2dynamo
# migrate --create-table` with fixtures/mappings/<domain>.yaml; then the same
# for Northwind with examples/northwind/mapping.yaml, if its SQL file exists.
#
# Environment (defaults in brackets):
#   PGHOST [127.0.0.1] PGPORT [5432] PGUSER [postgres]   the PostgreSQL server
#   SCALE [1]                 fixtures scale factor (scale 1: ~57k rows in all)
#   NORTHWIND_SQL [examples/northwind/northwind.sql]
#                             skipped, with a message, when the file is absent
#   DYNAMODB_ENDPOINT         use this DynamoDB (e.g. http://localhost:8000)
#                             instead of starting dynalite; tables are reused
#                             (migrate overwrites items by key)
#   DEMO_DB_PREFIX [pg2dynamo_demo_]  database name prefix
#   DEMO_RECREATE_DB [1]      1: drop and create each database; 0: create it
#                             only if missing (the tables are re-created anyway)
#   PG2DYNAMO_BIN             use this binary instead of `go build -o pg2dynamo .`
#   AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY [local], AWS_REGION [us-east-1]
#
# Exit status: 0 all loaded; 1 a step failed; 3 the migrations finished but
# some rows were rejected (see the demo-<domain>.rejects.jsonl files).
set -euo pipefail

cd "$(dirname "$0")/.."
# shellcheck source=scripts/dynalite.sh
source scripts/dynalite.sh

export PGHOST="${PGHOST:-127.0.0.1}" PGPORT="${PGPORT:-5432}" PGUSER="${PGUSER:-postgres}"
SCALE="${SCALE:-1}"
NORTHWIND_SQL="${NORTHWIND_SQL:-examples/northwind/northwind.sql}"
DEMO_DB_PREFIX="${DEMO_DB_PREFIX-pg2dynamo_demo_}"
DEMO_RECREATE_DB="${DEMO_RECREATE_DB:-1}"
DOMAINS=(customers tickets attendance)

step() { printf '\n==> %s\n' "$*" >&2; }
die() {
	printf 'demo: %s\n' "$*" >&2
	exit 1
}

# source_url DB prints the connection URL of database DB on PGHOST/PGPORT as
# PGUSER (the password, if any, stays in PGPASSWORD). A PGHOST starting with
# '/' is a Unix socket directory.
source_url() {
	if [[ $PGHOST == /* ]]; then
		printf 'postgres://%s@/%s?host=%s&port=%s\n' "$PGUSER" "$1" "$PGHOST" "$PGPORT"
	else
		printf 'postgres://%s@%s:%s/%s\n' "$PGUSER" "$PGHOST" "$PGPORT" "$1"
	fi
}

# --- PostgreSQL -------------------------------------------------------------
step "PostgreSQL at $PGHOST:$PGPORT"
if ! pg_isready -q -h "$PGHOST" -p "$PGPORT" -t 5; then
	case $PGHOST in
	127.0.0.1 | localhost | ::1 | /*) local_pg=1 ;;
	*) local_pg=0 ;;
	esac
	if ((local_pg)) && command -v pg_ctlcluster >/dev/null 2>&1 && [[ -d /etc/postgresql ]]; then
		version="$(printf '%s\n' /etc/postgresql/*/ | sort -V | tail -n 1)"
		version="$(basename "$version")"
		if pg_ctlcluster "$version" main status >/dev/null 2>&1; then
			die "PostgreSQL $version/main is running but does not answer on $PGHOST:$PGPORT: set PGHOST/PGPORT to where it listens"
		fi
		echo "not answering; starting the local cluster $version/main" >&2
		pg_ctlcluster --skip-systemctl-redirect "$version" main start ||
			die "could not start PostgreSQL $version/main with pg_ctlcluster (try as root, or start it yourself)"
		for _ in $(seq 1 30); do
			pg_isready -q -h "$PGHOST" -p "$PGPORT" && break
			sleep 1
		done
	fi
	pg_isready -h "$PGHOST" -p "$PGPORT" >&2 ||
		die "PostgreSQL does not answer on $PGHOST:$PGPORT: start it, or set PGHOST/PGPORT/PGUSER to a server that does"
fi
psql -X -q -d postgres -c 'SELECT 1' >/dev/null ||
	die "cannot connect to PostgreSQL as $PGUSER on $PGHOST:$PGPORT (set PGUSER/PGPASSWORD)"

# --- DynamoDB ---------------------------------------------------------------
if [[ -n ${DYNAMODB_ENDPOINT:-} ]]; then
	step "DynamoDB at $DYNAMODB_ENDPOINT (DYNAMODB_ENDPOINT; existing tables are reused)"
	dynamo_where="$DYNAMODB_ENDPOINT"
	# Wait for it, e.g. DynamoDB Local's JVM still starting under compose.
	hostport="${DYNAMODB_ENDPOINT#*://}"
	hostport="${hostport%%/*}"
	dyn_host="${hostport%:*}"
	dyn_port="${hostport##*:}"
	if [[ $dyn_host == "$hostport" ]]; then # no port in the URL
		dyn_port=80
		[[ $DYNAMODB_ENDPOINT == https://* ]] && dyn_port=443
	fi
	dyn_host="${dyn_host#[}"
	dyn_host="${dyn_host%]}"
	wait_for_port "$dyn_host" "$dyn_port" 60 ||
		die "DynamoDB does not answer at $DYNAMODB_ENDPOINT (waited 60s)"
else
	if [[ ! -f node_modules/dynalite/cli.js ]]; then
		step "npm ci (dynalite)"
		npm ci --no-audit --no-fund
	fi
	step "dynalite (in memory)"
	trap stop_dynalite EXIT
	trap 'exit 130' INT
	trap 'exit 143' TERM
	start_dynalite || die "could not start dynalite"
	echo "dynalite pid $DYNALITE_PID listening at $DYNAMODB_ENDPOINT" >&2
	dynamo_where="$DYNAMODB_ENDPOINT (dynalite, in memory: stopped as this script exits)"
fi

# --- pg2dynamo --------------------------------------------------------------
if [[ -n ${PG2DYNAMO_BIN:-} ]]; then
	pg2dynamo="$PG2DYNAMO_BIN"
else
	step "go build -o pg2dynamo ."
	go build -o pg2dynamo .
	pg2dynamo=./pg2dynamo
fi

export AWS_ACCESS_KEY_ID="${AWS_ACCESS_KEY_ID:-local}"
export AWS_SECRET_ACCESS_KEY="${AWS_SECRET_ACCESS_KEY:-local}"
export AWS_REGION="${AWS_REGION:-us-east-1}"

# prepare_db DB: an empty (DEMO_RECREATE_DB=1) or existing database DB.
prepare_db() {
	if [[ $DEMO_RECREATE_DB == 1 ]]; then
		PGOPTIONS="-c client_min_messages=warning" dropdb --if-exists --force "$1"
		createdb "$1"
	else
		local exists
		exists="$(psql -X -At -v ON_ERROR_STOP=1 -v db="$1" -d postgres \
			<<<"SELECT 1 FROM pg_database WHERE datname = :'db'")"
		[[ -n $exists ]] || createdb "$1"
	fi
}

loaded=()
databases=()
rejected=()
# migrate NAME DB MAPPING: migrate database DB into DynamoDB by MAPPING.
migrate() {
	local name=$1 db=$2 mapping=$3 rc=0 rejects="demo-$1.rejects.jsonl"
	databases+=("$db")
	rm -f "$rejects" # from an earlier run: written only if a row is rejected
	"$pg2dynamo" migrate --mapping "$mapping" --source "$(source_url "$db")" \
		--endpoint-url "$DYNAMODB_ENDPOINT" --create-table --progress lines \
		--rejects "$rejects" || rc=$?
	case $rc in
	0) ;;
	3)
		echo "demo: $name: some rows were rejected, listed in $rejects" >&2
		rejected+=("$name")
		;;
	*) die "$name: pg2dynamo migrate failed (exit status $rc)" ;;
	esac
	loaded+=("$(table_name "$mapping" "$name")")
}

# table_name MAPPING DEFAULT prints table.name of MAPPING (block style YAML),
# or DEFAULT.
table_name() {
	local t
	t="$(awk '/^table:/ { in_table = 1; next }
		in_table && /^[^ #]/ { exit }
		in_table && $1 == "name:" { print $2; exit }' "$1")"
	printf '%s\n' "${t:-$2}"
}

start=$SECONDS
for domain in "${DOMAINS[@]}"; do
	db="$DEMO_DB_PREFIX$domain"
	step "$domain: database $db, scale $SCALE"
	t0=$SECONDS
	prepare_db "$db"
	"$pg2dynamo" fixtures load --domain "$domain" --scale "$SCALE" --source "$(source_url "$db")"
	migrate "$domain" "$db" "fixtures/mappings/$domain.yaml"
	echo "$domain: done in $((SECONDS - t0))s" >&2
done

db="${DEMO_DB_PREFIX}northwind"
if [[ -f $NORTHWIND_SQL ]]; then
	step "northwind: database $db from $NORTHWIND_SQL"
	t0=$SECONDS
	prepare_db "$db"
	psql -X -v ON_ERROR_STOP=1 -q -d "$db" -f "$NORTHWIND_SQL"
	migrate northwind "$db" examples/northwind/mapping.yaml
	echo "northwind: done in $((SECONDS - t0))s" >&2
else
	step "northwind: skipped, no file at $NORTHWIND_SQL (set NORTHWIND_SQL to the path of northwind.sql)"
fi

echo
echo "demo: loaded DynamoDB tables ${loaded[*]} from PostgreSQL $PGHOST:$PGPORT (databases ${databases[*]}) into $dynamo_where in $((SECONDS - start))s"
if ((${#rejected[@]})); then
	echo "demo: rows were rejected in: ${rejected[*]} (see demo-<name>.rejects.jsonl)" >&2
	exit 3
fi
