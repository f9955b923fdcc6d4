#!/usr/bin/env bash
#
# demo.sh: load the sample databases into PostgreSQL and migrate each into a
# single-table design in DynamoDB, end to end, then show an item collection
# as a Query returns it. `make demo` runs it on a machine without Docker (the
# native mirror of docker-compose.yml, whose migrate service runs this same
# script inside the image).
#
# Needs: a PostgreSQL server (trust auth, or PGPASSWORD), psql/createdb/dropdb
# (on this machine, scripts/postgres.sh starts its cluster, or creates one,
# or installs Debian's postgresql package when root with apt-get),
# Go (unless PG2DYNAMO_BIN and DEMO_DDB_BIN are set), and either Node.js
# (dynalite is started in memory) or DYNAMODB_ENDPOINT pointing at a running
# DynamoDB Local.
#
# Steps: for each fixture domain (customers, tickets, attendance): print the
# design (`pg2dynamo plan` of fixtures/mappings/strategies/<domain>.yaml:
# embedded children, duplicated parent columns, item collections, overloaded,
# inverted and sparse GSIs, kept counts); (re)create database
# pg2dynamo_demo_<domain> and `pg2dynamo fixtures load` it; delete the
# DynamoDB table if it exists; `pg2dynamo migrate --create-table`, whose
# verify runs every access pattern of the mapping as a real Query. Then the
# same for Northwind (examples/northwind/mapping.yaml), if its SQL file
# exists. Then one item collection (a user and their tickets, newest first:
# access pattern UserWithNewestTickets) is queried and printed.
#
# Afterwards: by default the dynalite this script started stops with it.
# DEMO_KEEP_SERVER=1 (`KEEP=1 make demo`) starts it on 127.0.0.1:8000
# instead and leaves it running; the script ends by printing the AWS CLI
# command that queries it and the README's first example. `make demo-stop`
# (`scripts/demo.sh stop`, with the same DEMO_DYNALITE_PORT) stops it.
#
# Environment (defaults in brackets):
#   PGHOST [127.0.0.1] PGPORT [5432] PGUSER [postgres]   the PostgreSQL server
#                             (PGPORT unset and nothing on 5432: the port of
#                             the cluster scripts/postgres.sh finds or makes)
#   SCALE [1]                 fixtures scale factor (scale 1: ~57k rows in all)
#   NORTHWIND_SQL [examples/northwind/northwind.sql]
#                             skipped, with a message, when the file is absent
#   DYNAMODB_ENDPOINT         use this DynamoDB (e.g. http://localhost:8000)
#                             instead of starting dynalite; it is left running
#   DEMO_KEEP_SERVER [0]      1: start dynalite on DEMO_DYNALITE_PORT and leave
#                             it running (a dynalite kept by an earlier run on
#                             that port is reused)
#   DEMO_DYNALITE_PORT [8000] its port on 127.0.0.1, with DEMO_KEEP_SERVER=1
#   DEMO_RECREATE_TABLES [1]  1: delete each demo table before migrating into
#                             it, so that a run with another SCALE (or an
#                             edited mapping) starts from an empty table;
#                             0: reuse it (migrate overwrites items by key;
#                             items of an earlier, larger run stay and fail
#                             verify as stale)
#   DEMO_DB_PREFIX            database name prefix: pg2dynamo_demo_ when the
#                             DynamoDB server outlives the script
#                             (DEMO_KEEP_SERVER=1 or DYNAMODB_ENDPOINT), so that
#                             the closing commands can query them; else
#                             pg2dynamo_demo_<pid>_, unique to the run (two
#                             demos on one server do not collide), and those
#                             databases are dropped as the script exits
#   DEMO_RECREATE_DB [1]      1: drop and create each database; 0: create it
#                             only if missing
#   DEMO_MAPPINGS [fixtures/mappings/strategies]  the domains' mappings
#   PG2DYNAMO_BIN             use this binary instead of `go build -o pg2dynamo .`
#   DEMO_DDB_BIN              use this binary instead of building tools/demo-ddb
#                             (it deletes the tables and prints the Query)
#   DEMO_HOST_DYNAMODB_ENDPOINT [DYNAMODB_ENDPOINT]  DEMO_HOST_PG [PGHOST:PGPORT]
#                             the addresses printed in the closing commands,
#                             as seen from the machine that runs them
#                             (compose: the published ports)
#   AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY [local], AWS_REGION [us-east-1]
#                             dummy credentials: a local server takes any
#
# Exit status: 0 all loaded and verified; 1 a step failed; 3 the migrations
# finished but some rows were rejected (see the demo-<domain>.rejects.jsonl
# files); a migration that fails otherwise ends the script with its own exit
# status (2 refused before writing, 4 verify found a difference: see
# `pg2dynamo --help`).
set -euo pipefail

cd "$(dirname "$0")/.."
# shellcheck source=scripts/dynalite.sh
source scripts/dynalite.sh
# shellcheck source=scripts/postgres.sh
source scripts/postgres.sh # before PGPORT gets its default: a PGPORT set is the only port it uses

DEMO_DYNALITE_PORT="${DEMO_DYNALITE_PORT:-8000}"
KEPT_PIDFILE="${TMPDIR:-/tmp}/pg2dynamo-demo-dynalite-$DEMO_DYNALITE_PORT.pid"
KEPT_LOG="${TMPDIR:-/tmp}/pg2dynamo-demo-dynalite-$DEMO_DYNALITE_PORT.log"

step() { printf '\n==> %s\n' "$*" >&2; }

# cleanup, at exit: the databases this run made when they are its own
# (drop_dbs: see DEMO_DB_PREFIX), demo-ddb's build directory, and the
# dynalite this script started.
drop_dbs=0
created_dbs=()
cleanup() {
	if ((drop_dbs)); then
		for db in "${created_dbs[@]}"; do
			PGOPTIONS="-c client_min_messages=warning" dropdb --if-exists --force "$db" || true
		done
	fi
	if [[ -n ${ddb_dir:-} ]]; then rm -rf "$ddb_dir"; fi
	stop_dynalite
}
trap cleanup EXIT
die() {
	printf 'demo: %s\n' "$*" >&2
	exit 1
}

# kept_dynalite_pid prints the pid of the dynalite an earlier
# DEMO_KEEP_SERVER=1 run left on DEMO_DYNALITE_PORT, and fails if there is
# none (no pid file, or its process is gone or is not dynalite).
kept_dynalite_pid() {
	local pid
	[[ -f $KEPT_PIDFILE ]] || return 1
	pid="$(<"$KEPT_PIDFILE")"
	[[ $pid =~ ^[0-9]+$ ]] && kill -0 "$pid" 2>/dev/null || return 1
	tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q 'dynalite/cli.js' || return 1
	printf '%s\n' "$pid"
}

# stop_kept_dynalite stops the dynalite a DEMO_KEEP_SERVER=1 run left (make
# demo-stop).
stop_kept_dynalite() {
	local pid
	if pid="$(kept_dynalite_pid)"; then
		kill "$pid"
		for _ in $(seq 1 50); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
		echo "demo: stopped dynalite (pid $pid) on 127.0.0.1:$DEMO_DYNALITE_PORT" >&2
	else
		echo "demo: no dynalite kept by the demo on 127.0.0.1:$DEMO_DYNALITE_PORT" >&2
	fi
	rm -f "$KEPT_PIDFILE" "$KEPT_LOG"
}

# start_kept_dynalite starts dynalite on 127.0.0.1:DEMO_DYNALITE_PORT in a
# session of its own, so that it outlives this script (and make), or reuses
# the one an earlier run kept there. It exports DYNAMODB_ENDPOINT and sets
# KEPT_PID.
start_kept_dynalite() {
	local port=$DEMO_DYNALITE_PORT
	export DYNAMODB_ENDPOINT="http://127.0.0.1:$port"
	if KEPT_PID="$(kept_dynalite_pid)"; then
		echo "reusing the dynalite (pid $KEPT_PID) an earlier run kept on 127.0.0.1:$port" >&2
		return
	fi
	if wait_for_port 127.0.0.1 "$port" 0; then
		die "127.0.0.1:$port is taken by another process: stop it, or pick a free port with DEMO_DYNALITE_PORT"
	fi
	local detach=()
	command -v setsid >/dev/null 2>&1 && detach=(setsid)
	# The guard keeps dynalite serving when a client goes away mid-request
	# (see scripts/dynalite-guard.cjs).
	"${detach[@]}" nohup node --require "$PWD/scripts/dynalite-guard.cjs" "$PWD/node_modules/dynalite/cli.js" \
		--host 127.0.0.1 --port "$port" --createTableMs 0 --deleteTableMs 0 --updateTableMs 0 \
		</dev/null >"$KEPT_LOG" 2>&1 &
	KEPT_PID=$!
	printf '%s\n' "$KEPT_PID" >"$KEPT_PIDFILE"
	if ! wait_for_port 127.0.0.1 "$port" 20 || ! kill -0 "$KEPT_PID" 2>/dev/null; then
		cat "$KEPT_LOG" >&2
		stop_kept_dynalite
		die "dynalite did not start on 127.0.0.1:$port (its log is above)"
	fi
	echo "dynalite pid $KEPT_PID listening at $DYNAMODB_ENDPOINT (log $KEPT_LOG)" >&2
}

if [[ ${1:-} == stop ]]; then
	stop_kept_dynalite
	exit 0
elif (($#)); then
	die "usage: scripts/demo.sh [stop] (settings are environment variables: see its header)"
fi

export PGHOST="${PGHOST:-127.0.0.1}" PGPORT="${PGPORT:-5432}" PGUSER="${PGUSER:-postgres}"
SCALE="${SCALE:-1}"
NORTHWIND_SQL="${NORTHWIND_SQL:-examples/northwind/northwind.sql}"
DEMO_RECREATE_DB="${DEMO_RECREATE_DB:-1}"
DEMO_RECREATE_TABLES="${DEMO_RECREATE_TABLES:-1}"
DEMO_KEEP_SERVER="${DEMO_KEEP_SERVER:-0}"
DEMO_MAPPINGS="${DEMO_MAPPINGS:-fixtures/mappings/strategies}"
DOMAINS=(customers tickets attendance)

# --- PostgreSQL -------------------------------------------------------------
step "PostgreSQL"
postgres_ensure || exit 1
echo "PostgreSQL at $PGHOST:$PGPORT" >&2
psql -X -q -d postgres -c 'SELECT 1' >/dev/null ||
	die "cannot connect to PostgreSQL as $PGUSER on $PGHOST:$PGPORT (set PGUSER/PGPASSWORD)"

# --- DynamoDB ---------------------------------------------------------------
# server_kept: 1 when DynamoDB stays up after the script (a server it did not
# start, or DEMO_KEEP_SERVER=1).
server_kept=1
if [[ -n ${DYNAMODB_ENDPOINT:-} ]]; then
	step "DynamoDB at $DYNAMODB_ENDPOINT (DYNAMODB_ENDPOINT)"
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
	command -v node >/dev/null 2>&1 || die "dynalite needs Node.js (or set DYNAMODB_ENDPOINT to a running DynamoDB Local)"
	if [[ $DEMO_KEEP_SERVER == 1 ]]; then
		step "dynalite (in memory, kept running: DEMO_KEEP_SERVER=1)"
		start_kept_dynalite
		dynamo_where="$DYNAMODB_ENDPOINT (dynalite pid $KEPT_PID, in memory, left running)"
	else
		step "dynalite (in memory)"
		server_kept=0
		trap 'exit 130' INT
		trap 'exit 143' TERM
		start_dynalite || die "could not start dynalite"
		echo "dynalite pid $DYNALITE_PID listening at $DYNAMODB_ENDPOINT" >&2
		dynamo_where="$DYNAMODB_ENDPOINT (dynalite, in memory: stopped as this script exits)"
	fi
fi

# The databases outlive the script only with the server that holds their
# tables (see DEMO_DB_PREFIX).
if [[ -z ${DEMO_DB_PREFIX+set} ]]; then
	if ((server_kept)); then
		DEMO_DB_PREFIX=pg2dynamo_demo_
	else
		DEMO_DB_PREFIX="pg2dynamo_demo_$$_"
		drop_dbs=1
	fi
fi

# --- pg2dynamo and demo-ddb -------------------------------------------------
if [[ -n ${PG2DYNAMO_BIN:-} ]]; then
	pg2dynamo="$PG2DYNAMO_BIN"
else
	step "go build -o pg2dynamo ."
	go build -o pg2dynamo .
	pg2dynamo=./pg2dynamo
fi
if [[ -n ${DEMO_DDB_BIN:-} ]]; then
	ddb="$DEMO_DDB_BIN"
else
	ddb_dir="$(mktemp -d "${TMPDIR:-/tmp}/pg2dynamo-demo.XXXXXX")"
	go -C tools build -o "$ddb_dir/demo-ddb" ./demo-ddb
	ddb="$ddb_dir/demo-ddb"
fi

export AWS_ACCESS_KEY_ID="${AWS_ACCESS_KEY_ID:-local}"
export AWS_SECRET_ACCESS_KEY="${AWS_SECRET_ACCESS_KEY:-local}"
export AWS_REGION="${AWS_REGION:-us-east-1}"

# prepare_db DB: an empty (DEMO_RECREATE_DB=1) or existing database DB.
prepare_db() {
	created_dbs+=("$1")
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

# table_name MAPPING prints table.name of MAPPING (block style YAML).
table_name() {
	awk '/^table:/ { in_table = 1; next }
		in_table && /^[^ #]/ { exit }
		in_table && $1 == "name:" { print $2; exit }' "$1"
}

# show_design MAPPING prints the design of MAPPING as `pg2dynamo plan` draws
# it: table, GSIs, entity chart and access patterns (not the CreateTable and
# CloudFormation JSON that follow).
show_design() {
	"$pg2dynamo" plan --mapping "$1" | awk '/^CREATETABLE REQUEST/ { exit } { print }' >&2
}

loaded=()
databases=()
rejected=()
# migrate NAME DB MAPPING: migrate database DB into DynamoDB by MAPPING, into
# an empty table unless DEMO_RECREATE_TABLES=0. A failed migration ends the
# script with its exit status.
migrate() {
	local name=$1 db=$2 mapping=$3 rc=0 rejects="demo-$1.rejects.jsonl" table
	table="$(table_name "$mapping")"
	[[ -n $table ]] || die "$mapping: no table.name"
	databases+=("$db")
	if [[ $DEMO_RECREATE_TABLES == 1 ]]; then
		"$ddb" delete-tables --endpoint-url "$DYNAMODB_ENDPOINT" "$table" >&2
	fi
	rm -f "$rejects" # from an earlier run: written only if a row is rejected
	"$pg2dynamo" migrate --mapping "$mapping" --source "$(postgres_url "$db")" \
		--endpoint-url "$DYNAMODB_ENDPOINT" --create-table --progress lines \
		--rejects "$rejects" || rc=$?
	case $rc in
	0) ;;
	3)
		echo "demo: $name: some rows were rejected, listed in $rejects" >&2
		rejected+=("$name")
		;;
	*)
		printf 'demo: %s: pg2dynamo migrate failed (exit status %d)\n' "$name" "$rc" >&2
		exit "$rc"
		;;
	esac
	loaded+=("$table")
}

start=$SECONDS
for domain in "${DOMAINS[@]}"; do
	db="$DEMO_DB_PREFIX$domain"
	mapping="$DEMO_MAPPINGS/$domain.yaml"
	step "$domain: the design ($mapping)"
	show_design "$mapping"
	step "$domain: database $db, scale $SCALE"
	t0=$SECONDS
	prepare_db "$db"
	"$pg2dynamo" fixtures load --domain "$domain" --scale "$SCALE" --source "$(postgres_url "$db")"
	migrate "$domain" "$db" "$mapping"
	echo "$domain: done in $((SECONDS - t0))s" >&2
done

db="${DEMO_DB_PREFIX}northwind"
northwind_loaded=0
if [[ -f $NORTHWIND_SQL ]]; then
	step "northwind: database $db from $NORTHWIND_SQL"
	t0=$SECONDS
	prepare_db "$db"
	psql -X -v ON_ERROR_STOP=1 -q -d "$db" -f "$NORTHWIND_SQL"
	migrate northwind "$db" examples/northwind/mapping.yaml
	northwind_loaded=1
	echo "northwind: done in $((SECONDS - t0))s" >&2
else
	step "northwind: skipped, no file at $NORTHWIND_SQL (set NORTHWIND_SQL to the path of northwind.sql)"
fi

# --- One item collection ----------------------------------------------------
# A user with about three tickets (the fewest tickets above two, then the
# smallest ID): the user item and its tickets share the partition key
# USER#<user_id>, and the user's sort key USER#… sorts after TICKET#…, so
# the Query newest first returns the user, then the newest tickets. The
# partition key is read from the user's item (a Scan), not rebuilt here:
# pg2dynamo renders the ID as its key template does (zero-padded).
tickets_table="$(table_name "$DEMO_MAPPINGS/tickets.yaml")"
user_id="$(psql -X -At -v ON_ERROR_STOP=1 -d "${DEMO_DB_PREFIX}tickets" -c \
	'SELECT user_id FROM tickets GROUP BY user_id ORDER BY count(*) < 3, count(*), user_id LIMIT 1')"
[[ -n $user_id ]] || die "no user with tickets in ${DEMO_DB_PREFIX}tickets"
step "an item collection: user $user_id and their tickets, in one Query (access pattern UserWithNewestTickets of $DEMO_MAPPINGS/tickets.yaml)"
user_pk="$("$ddb" find-key --endpoint-url "$DYNAMODB_ENDPOINT" --table "$tickets_table" --where type=User --where "user_id=$user_id")"
"$ddb" query --endpoint-url "$DYNAMODB_ENDPOINT" --table "$tickets_table" --pk "$user_pk" --desc --min-items 2

echo
dbs_note="databases ${databases[*]}"
((drop_dbs)) && dbs_note+=", dropped as this script exits"
echo "demo: loaded DynamoDB tables ${loaded[*]} from PostgreSQL $PGHOST:$PGPORT ($dbs_note) into $dynamo_where in $((SECONDS - start))s"

# --- What to do next --------------------------------------------------------
host_endpoint="${DEMO_HOST_DYNAMODB_ENDPOINT:-$DYNAMODB_ENDPOINT}"
host_pg="${DEMO_HOST_PG:-$PGHOST:$PGPORT}"
if ((server_kept)); then
	if [[ -n ${KEPT_PID:-} ]]; then
		stop_cmd="make demo-stop"
		[[ $DEMO_DYNALITE_PORT == 8000 ]] || stop_cmd="DEMO_DYNALITE_PORT=$DEMO_DYNALITE_PORT $stop_cmd"
		echo "demo: dynalite keeps running at $host_endpoint (pid $KEPT_PID, in memory); stop it with: $stop_cmd"
	else
		echo "demo: DynamoDB at $host_endpoint was not started by this script, which leaves it as it is"
	fi
	echo "demo: while it runs, query it with the AWS CLI (dummy credentials; a local server takes any):"
	echo "  AWS_ACCESS_KEY_ID=local AWS_SECRET_ACCESS_KEY=local aws dynamodb query --endpoint-url $host_endpoint --region $AWS_REGION \\"
	echo "    --table-name $tickets_table --key-condition-expression '${user_pk%%=*} = :pk' \\"
	echo "    --expression-attribute-values '{\":pk\":{\"S\":\"${user_pk#*=}\"}}' --no-scan-index-forward"
	if ((northwind_loaded)); then
		echo "demo: and run the README's first example against it (./pg2dynamo: make build):"
		echo "  AWS_ACCESS_KEY_ID=local AWS_SECRET_ACCESS_KEY=local ./pg2dynamo migrate --mapping examples/northwind/mapping.yaml \\"
		echo "    --source postgres://$PGUSER@$host_pg/${DEMO_DB_PREFIX}northwind --endpoint-url $host_endpoint --region $AWS_REGION --create-table"
	fi
else
	echo "demo: dynalite stops now, and its tables with it. To keep it running on 127.0.0.1:$DEMO_DYNALITE_PORT and query it with the AWS CLI: KEEP=1 make demo"
fi
if ((${#rejected[@]})); then
	echo "demo: rows were rejected in: ${rejected[*]} (see demo-<name>.rejects.jsonl)" >&2
	exit 3
fi
