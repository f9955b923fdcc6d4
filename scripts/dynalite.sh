# shellcheck shell=bash
#
# dynalite.sh: start and stop dynalite, the DynamoDB-compatible server pinned
# in package.json (installed with `npm ci`), for scripts that need a throwaway
# DynamoDB. Source it, don't run it:
#
#   source scripts/dynalite.sh
#   start_dynalite || exit 1        # sets DYNALITE_PID and DYNAMODB_ENDPOINT
#   trap stop_dynalite EXIT
#
# dynalite runs in memory on a free 127.0.0.1 port with the table state delays
# at 0 (CreateTable is ACTIVE at once); everything is gone when it stops. Its
# output goes to a temporary log, shown if it fails to start.
#
# Also defined: wait_for_port HOST PORT SECONDS, free_port.

# The repository root, whatever the caller's working directory.
_DYNALITE_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

DYNALITE_PID=""
DYNALITE_LOG=""

# free_port prints a TCP port that is free on 127.0.0.1 (the kernel's pick
# for port 0). Another process could take it before it is used: start_dynalite
# retries with a new port if dynalite cannot bind.
free_port() {
	if command -v python3 >/dev/null 2>&1; then
		python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
	elif command -v node >/dev/null 2>&1; then
		node -e 'const s = require("net").createServer(); s.listen(0, "127.0.0.1", () => { console.log(s.address().port); s.close(); })'
	else
		echo "free_port: neither python3 nor node is installed" >&2
		return 1
	fi
}

# wait_for_port HOST PORT SECONDS succeeds as soon as HOST:PORT accepts a TCP
# connection, and fails after SECONDS (bash's /dev/tcp, no other tool needed).
wait_for_port() {
	local host=$1 port=$2 seconds=$3 deadline
	deadline=$((SECONDS + seconds))
	while ! (exec 3<>"/dev/tcp/$host/$port") 2>/dev/null; do
		if ((SECONDS >= deadline)); then
			return 1
		fi
		sleep 0.1
	done
}

# start_dynalite starts dynalite in the background and waits (20s at most)
# until it listens. On success it sets DYNALITE_PID and exports
# DYNAMODB_ENDPOINT (http://127.0.0.1:PORT); on failure it prints why and
# returns 1.
start_dynalite() {
	local cli="$_DYNALITE_ROOT/node_modules/dynalite/cli.js" port attempt deadline
	if ! command -v node >/dev/null 2>&1; then
		echo "start_dynalite: node is not installed (dynalite needs Node.js)" >&2
		return 1
	fi
	if [[ ! -f $cli ]]; then
		echo "start_dynalite: dynalite is not installed: run 'npm ci' in $_DYNALITE_ROOT" >&2
		return 1
	fi
	if [[ -n $DYNALITE_PID ]]; then
		echo "start_dynalite: dynalite is already running (pid $DYNALITE_PID)" >&2
		return 1
	fi
	DYNALITE_LOG="$(mktemp "${TMPDIR:-/tmp}/dynalite.XXXXXX.log")" || return 1
	for attempt in 1 2 3; do
		port="$(free_port)" || return 1
		# The guard keeps dynalite serving when a client goes away mid-request
		# (see scripts/dynalite-guard.cjs).
		node --require "$_DYNALITE_ROOT/scripts/dynalite-guard.cjs" "$cli" --host 127.0.0.1 --port "$port" \
			--createTableMs 0 --deleteTableMs 0 --updateTableMs 0 >"$DYNALITE_LOG" 2>&1 &
		DYNALITE_PID=$!
		deadline=$((SECONDS + 20))
		while kill -0 "$DYNALITE_PID" 2>/dev/null; do
			# Listening, and still alive: not another process that took the port.
			if wait_for_port 127.0.0.1 "$port" 0 && kill -0 "$DYNALITE_PID" 2>/dev/null; then
				export DYNAMODB_ENDPOINT="http://127.0.0.1:$port"
				return 0
			fi
			if ((SECONDS >= deadline)); then
				echo "start_dynalite: dynalite did not listen on 127.0.0.1:$port within 20s; its log:" >&2
				cat "$DYNALITE_LOG" >&2
				stop_dynalite
				return 1
			fi
			sleep 0.1
		done
		# It exited before listening (e.g. the port was taken meanwhile).
		wait "$DYNALITE_PID" 2>/dev/null || true
		DYNALITE_PID=""
		echo "start_dynalite: dynalite exited on start (attempt $attempt); its log:" >&2
		cat "$DYNALITE_LOG" >&2
	done
	rm -f "$DYNALITE_LOG"
	DYNALITE_LOG=""
	return 1
}

# stop_dynalite stops the server start_dynalite started (if any), waits for
# it and removes its log. Safe to call twice, or when nothing was started.
stop_dynalite() {
	if [[ -n ${DYNALITE_PID:-} ]]; then
		kill "$DYNALITE_PID" 2>/dev/null || true
		wait "$DYNALITE_PID" 2>/dev/null || true
		DYNALITE_PID=""
	fi
	if [[ -n ${DYNALITE_LOG:-} ]]; then
		rm -f "$DYNALITE_LOG"
		DYNALITE_LOG=""
	fi
}
