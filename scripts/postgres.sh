# shellcheck shell=bash
#
# postgres.sh: the PostgreSQL server scripts/test.sh and scripts/demo.sh
# need, found, started, created or installed. Source it, don't run it:
#
#   source scripts/postgres.sh      # before PGPORT gets a default
#   postgres_ensure || exit 1       # a server answers on PGHOST:PGPORT
#   postgres_logical || exit 1      # and decodes logically (the tests)
#
# postgres_ensure: when nothing answers on PGHOST:PGPORT (default
# 127.0.0.1:5432, user postgres) and PGHOST is this machine, it
#   - starts the Debian cluster (pg_lsclusters) on PGPORT, or, when PGPORT
#     was not set, the first cluster there is, and takes its port;
#   - else, with PostgreSQL not installed, installs Debian's postgresql
#     package when root with apt-get (as scripts/test.sh installs
#     chromium), and otherwise fails with one line saying what to install;
#   - else creates a cluster, 'pg2dynamo', of the newest version installed,
#     on PGPORT or, when PGPORT was not set and 5432 is taken, the first
#     free port above, with trust authentication on 127.0.0.1 and ::1 and
#     logical decoding, and starts it.
# A cluster the package's installation created gets the same trust lines in
# its pg_hba.conf: the tests and the demo connect as postgres over TCP
# without a password. It exports PGHOST, PGPORT and PGUSER, and sets
# POSTGRES_CLUSTER ("15 main") when a Debian cluster on this machine serves
# PGPORT. Messages go to stderr; it returns 1 when no server can be had.
#
# postgres_logical: sets wal_level=logical and max_replication_slots and
# max_wal_senders to at least 40 (the follow tests) on the server of
# POSTGRES_ADMIN_URL (default: postgres_url postgres), with ALTER SYSTEM and
# a restart of POSTGRES_CLUSTER, after a line naming each setting it
# changes, from what to what; without a cluster to restart it fails saying
# what to set.
#
# postgres_url DB prints the connection URL of database DB on PGHOST:PGPORT
# as PGUSER (a password stays in PGPASSWORD).

# POSTGRES_PORT_GIVEN is 1 when PGPORT was set before this file was
# sourced: then only that port will do.
POSTGRES_PORT_GIVEN=${PGPORT:+1}
POSTGRES_CLUSTER=""

# postgres_wait is how long a server that starts or restarts has to answer,
# in seconds: it takes a few, far more on a loaded machine.
postgres_wait=120

# postgres_ready succeeds when a server accepts connections on
# PGHOST:PGPORT.
postgres_ready() {
	command -v pg_isready >/dev/null 2>&1 && pg_isready -q -h "$PGHOST" -p "$PGPORT" -t 5
}

# postgres_wait_ready waits up to postgres_wait seconds for postgres_ready.
postgres_wait_ready() {
	local deadline=$((SECONDS + postgres_wait))
	until postgres_ready; do
		((SECONDS < deadline)) || return 1
		sleep 1
	done
}

# postgres_local succeeds when PGHOST is this machine.
postgres_local() {
	case $PGHOST in
	127.0.0.1 | localhost | ::1 | /*) return 0 ;;
	esac
	return 1
}

# postgres_installed succeeds when Debian's PostgreSQL server and its
# cluster tools are installed.
postgres_installed() {
	local cmd
	for cmd in pg_lsclusters pg_ctlcluster pg_createcluster psql pg_isready; do
		command -v "$cmd" >/dev/null 2>&1 || return 1
	done
	compgen -G '/usr/lib/postgresql/*/bin/postgres' >/dev/null
}

# postgres_clusters prints the clusters: "VERSION NAME PORT STATUS" a line.
postgres_clusters() {
	pg_lsclusters -h 2>/dev/null | while read -r version name port status _; do
		printf '%s %s %s %s\n' "$version" "$name" "$port" "$status"
	done
}

# postgres_port_taken succeeds when something listens on 127.0.0.1:PORT or a
# cluster is set to use PORT.
postgres_port_taken() {
	local port=$1 p
	(exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && return 0
	while read -r _ _ p _; do
		[[ $p == "$port" ]] && return 0
	done < <(postgres_clusters)
	return 1
}

# postgres_install installs Debian's postgresql package when root with
# apt-get; otherwise it prints the one line that says what to install and
# fails.
postgres_install() {
	if ! command -v apt-get >/dev/null 2>&1; then
		echo "no PostgreSQL answers on $PGHOST:$PGPORT and none is installed: install PostgreSQL 13 or later (server, psql, pg_isready) and start it there, or set PGHOST/PGPORT to a server that runs" >&2
		return 1
	fi
	if [[ $(id -u) != 0 ]]; then
		echo "no PostgreSQL answers on $PGHOST:$PGPORT and none is installed: install Debian's postgresql package (sudo apt-get install postgresql), or set PGHOST/PGPORT to a server that runs" >&2
		return 1
	fi
	echo "installing PostgreSQL (Debian's postgresql package)" >&2
	local install=(apt-get install -y --no-install-recommends postgresql)
	DEBIAN_FRONTEND=noninteractive "${install[@]}" >/dev/null ||
		{ apt-get update >/dev/null && DEBIAN_FRONTEND=noninteractive "${install[@]}" >/dev/null; } || {
		echo "apt-get install postgresql failed: install Debian's postgresql package" >&2
		return 1
	}
	postgres_installed || {
		echo "apt-get installed postgresql but its server or cluster tools are missing: install Debian's postgresql package" >&2
		return 1
	}
	POSTGRES_INSTALLED_NOW=1
}

# postgres_trust_tcp puts trust lines for 127.0.0.1 and ::1 first in the
# pg_hba.conf of cluster VERSION NAME (one this file's functions installed)
# and reloads it.
postgres_trust_tcp() {
	local hba
	hba=$(pg_conftool -s "$1" "$2" show hba_file 2>/dev/null) || hba=/etc/postgresql/$1/$2/pg_hba.conf
	grep -q '^# pg2dynamo' "$hba" && return 0
	echo "PostgreSQL $1/$2: trusting connections from 127.0.0.1 and ::1 (the tests and the demo connect as postgres without a password)" >&2
	local lines
	lines=$(
		echo "# pg2dynamo (scripts/postgres.sh): the tests and the demo connect over TCP as postgres, without a password"
		echo "host all all 127.0.0.1/32 trust"
		echo "host all all ::1/128 trust"
		cat "$hba"
	) && printf '%s\n' "$lines" >"$hba" # in place: its owner and mode stay
	pg_ctlcluster --skip-systemctl-redirect "$1" "$2" reload 2>/dev/null || true
}

# postgres_create creates and starts cluster 'pg2dynamo' of the newest
# version installed on PGPORT.
postgres_create() {
	local version
	version=$(compgen -G '/usr/lib/postgresql/*/bin/postgres' | sort -V | tail -n 1)
	version=${version#/usr/lib/postgresql/}
	version=${version%%/*}
	echo "creating PostgreSQL cluster $version/pg2dynamo on port $PGPORT (trust on 127.0.0.1, wal_level=logical)" >&2
	pg_createcluster --port "$PGPORT" --start \
		-o wal_level=logical -o max_replication_slots=40 -o max_wal_senders=40 \
		"$version" pg2dynamo -- --auth-local=peer --auth-host=trust >&2 || {
		echo "pg_createcluster failed: create a cluster as root (pg_createcluster --start --port $PGPORT $version main -- --auth-host=trust), or set PGHOST/PGPORT to a server that runs" >&2
		return 1
	}
	POSTGRES_CLUSTER="$version pg2dynamo"
}

# postgres_ensure: see the header.
postgres_ensure() {
	export PGHOST=${PGHOST:-127.0.0.1} PGPORT=${PGPORT:-5432} PGUSER=${PGUSER:-postgres}
	local rc=0
	command -v pg_isready >/dev/null 2>&1 && { pg_isready -q -h "$PGHOST" -p "$PGPORT" -t 5 || rc=$?; }
	if ((rc == 1)); then # rejecting connections: starting up
		postgres_wait_ready || true
	fi
	if postgres_ready; then
		postgres_find_cluster
		return 0
	fi
	if ! postgres_local; then
		echo "PostgreSQL does not answer on $PGHOST:$PGPORT: start it, or set PGHOST/PGPORT/PGUSER to a server that does" >&2
		return 1
	fi
	postgres_installed || postgres_install || return 1
	# The cluster on PGPORT, else (PGPORT not set) the first.
	local version name port status found
	found=$(postgres_clusters | awk -v port="$PGPORT" '$3 == port' | head -n 1)
	[[ -n $found || -n $POSTGRES_PORT_GIVEN ]] || found=$(postgres_clusters | head -n 1)
	if [[ -n $found ]]; then
		read -r version name port status <<<"$found"
		PGPORT=$port
		POSTGRES_CLUSTER="$version $name"
		((${POSTGRES_INSTALLED_NOW:-0})) && postgres_trust_tcp "$version" "$name"
		if [[ $status != online* ]]; then
			echo "starting PostgreSQL $version/$name on port $PGPORT" >&2
			pg_ctlcluster --skip-systemctl-redirect "$version" "$name" start || {
				echo "could not start PostgreSQL $version/$name with pg_ctlcluster: start it as root (pg_ctlcluster $version $name start), or set PGHOST/PGPORT to a server that runs" >&2
				return 1
			}
		fi
	else
		if postgres_port_taken "$PGPORT"; then
			if [[ -n $POSTGRES_PORT_GIVEN ]]; then
				echo "port $PGPORT is taken, and not by PostgreSQL: free it, or set PGPORT to another" >&2
				return 1
			fi
			until ! postgres_port_taken "$PGPORT"; do PGPORT=$((PGPORT + 1)); done
		fi
		postgres_create || return 1
	fi
	postgres_wait_ready || {
		echo "PostgreSQL ${POSTGRES_CLUSTER/ //} does not answer on $PGHOST:$PGPORT after ${postgres_wait}s" >&2
		return 1
	}
}

# postgres_find_cluster sets POSTGRES_CLUSTER to the Debian cluster on
# PGPORT, if PGHOST is this machine and one is.
postgres_find_cluster() {
	postgres_local && command -v pg_lsclusters >/dev/null 2>&1 || return 0
	local version name port status
	while read -r version name port status; do
		if [[ $port == "$PGPORT" && $status == online* ]]; then
			POSTGRES_CLUSTER="$version $name"
			return 0
		fi
	done < <(postgres_clusters)
}

# postgres_url: see the header. A PGHOST starting with '/' is a Unix socket
# directory.
postgres_url() {
	if [[ $PGHOST == /* ]]; then
		printf 'postgres://%s@/%s?host=%s&port=%s\n' "$PGUSER" "$1" "$PGHOST" "$PGPORT"
	else
		printf 'postgres://%s@%s:%s/%s?sslmode=disable\n' "$PGUSER" "$PGHOST" "$PGPORT" "$1"
	fi
}

# postgres_logical_changes LEVEL SLOTS SENDERS prints what postgres_logical
# changes of a server with those settings, a line "NAME FROM TO" each.
postgres_logical_changes() {
	[[ $1 == logical ]] || echo "wal_level $1 logical"
	(($2 >= 40)) || echo "max_replication_slots $2 40"
	(($3 >= 40)) || echo "max_wal_senders $3 40"
}

# postgres_logical: see the header.
postgres_logical() {
	local url=${POSTGRES_ADMIN_URL:-$(postgres_url postgres)}
	local psql=(psql -X -q -At -d "$url" -v ON_ERROR_STOP=1)
	local level slots senders setting from to
	level=$("${psql[@]}" -c 'SHOW wal_level') &&
		slots=$("${psql[@]}" -c 'SHOW max_replication_slots') &&
		senders=$("${psql[@]}" -c 'SHOW max_wal_senders') &&
		[[ -n $level && $slots =~ ^[0-9]+$ && $senders =~ ^[0-9]+$ ]] || {
		echo "cannot read PostgreSQL's wal_level, max_replication_slots and max_wal_senders with psql (the tests connect as postgres without a password: trust on 127.0.0.1)" >&2
		return 1
	}
	local changes=() said=()
	while read -r setting from to; do
		[[ -n $setting ]] || continue
		changes+=(-c "ALTER SYSTEM SET $setting = $to")
		said+=("$setting from $from to $to")
	done < <(postgres_logical_changes "$level" "$slots" "$senders")
	((${#changes[@]})) || return 0
	local what cluster
	what=$(printf '%s, ' "${said[@]}")
	what=${what%, }
	if [[ -z $POSTGRES_CLUSTER ]]; then
		echo "PostgreSQL needs $what for the follow tests (ALTER SYSTEM SET …, then restart the server)" >&2
		return 1
	fi
	read -ra cluster <<<"$POSTGRES_CLUSTER"
	echo "setting PostgreSQL ${POSTGRES_CLUSTER/ //}'s $what, and restarting it" >&2
	"${psql[@]}" "${changes[@]}" &&
		pg_ctlcluster --skip-systemctl-redirect "${cluster[@]}" restart && postgres_wait_ready || {
		echo "could not set $what and restart PostgreSQL ${POSTGRES_CLUSTER/ //}" >&2
		return 1
	}
	level=$("${psql[@]}" -c 'SHOW wal_level')
	[[ $level == logical ]] || {
		echo "PostgreSQL's wal_level is still $level after the restart" >&2
		return 1
	}
}
