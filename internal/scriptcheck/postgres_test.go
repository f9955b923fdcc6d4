package scriptcheck

import (
	"bytes"
	"errors"
	"net"
	neturl "net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pg2dynamo/pg2dynamo/tools/testenv"
)

// bash runs script (bash, after `source scripts/postgres.sh`) with env as
// its whole environment and returns its exit code and stderr.
func bash(t *testing.T, env []string, script string) (code int, stdout, stderr string) {
	t.Helper()
	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	bashPath, err := exec.LookPath("bash")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bashPath, "-c", `set -u; source "$1"; `+script, "bash", filepath.Join(root, "scripts", "postgres.sh"))
	cmd.Env = env
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err = cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatal(err)
	}
	return cmd.ProcessState.ExitCode(), out.String(), errb.String()
}

// fakeBin makes a directory of executable bash scripts, name to body, for
// a PATH that holds only them.
func fakeBin(t *testing.T, tools map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range tools {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/bash\n"+body+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// closedPort is a loopback port nothing listens on (the kernel's pick,
// closed again).
func closedPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	l.Close()
	return port
}

func TestPostgresNotFound(t *testing.T) {
	port := closedPort(t)
	notRoot, root := `echo 1000`, `echo 0`
	const install = "DEBIAN_FRONTEND=noninteractive install -y --no-install-recommends postgresql"
	for _, tc := range []struct {
		name  string
		host  string
		tools map[string]string // besides apt-get, which records its calls
		// apt: an apt-get that exits with aptExit
		apt     bool
		aptExit int
		want    []string // stderr, line by line
		// aptCalls: what apt-get was asked
		aptCalls []string
	}{
		{"not root, with apt-get", "127.0.0.1", map[string]string{"id": notRoot}, true, 0, []string{
			"no PostgreSQL answers on 127.0.0.1:" + port + " and none is installed: install Debian's postgresql package (sudo apt-get install postgresql), or set PGHOST/PGPORT to a server that runs",
		}, nil},
		{"root, without apt-get", "127.0.0.1", map[string]string{"id": root}, false, 0, []string{
			"no PostgreSQL answers on 127.0.0.1:" + port + " and none is installed: install PostgreSQL 13 or later (server, psql, pg_isready) and start it there, or set PGHOST/PGPORT to a server that runs",
		}, nil},
		{"root, with an apt-get that installs nothing", "127.0.0.1", map[string]string{"id": root}, true, 0, []string{
			"installing PostgreSQL (Debian's postgresql package)",
			"apt-get installed postgresql but its server or cluster tools are missing: install Debian's postgresql package",
		}, []string{install}},
		{"root, with an apt-get that fails", "127.0.0.1", map[string]string{"id": root}, true, 100, []string{
			"installing PostgreSQL (Debian's postgresql package)",
			"apt-get install postgresql failed: install Debian's postgresql package",
		}, []string{install, "DEBIAN_FRONTEND= update"}}, // install, update (failing too), no second install
		{"a server on another machine is not installed here", "192.0.2.1", map[string]string{"id": root}, true, 0, []string{
			"PostgreSQL does not answer on 192.0.2.1:" + port + ": start it, or set PGHOST/PGPORT/PGUSER to a server that does",
		}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			calls := filepath.Join(t.TempDir(), "apt-get.calls")
			tools := map[string]string{}
			for name, body := range tc.tools {
				tools[name] = body
			}
			if tc.apt {
				tools["apt-get"] = `echo "DEBIAN_FRONTEND=${DEBIAN_FRONTEND:-} $*" >>` + calls + "\nexit " + strconv.Itoa(tc.aptExit)
			}
			env := []string{"PATH=" + fakeBin(t, tools), "PGHOST=" + tc.host, "PGPORT=" + port}
			code, _, stderr := bash(t, env, "postgres_ensure")
			if code != 1 {
				t.Errorf("exit %d, want 1", code)
			}
			if d := cmp.Diff(tc.want, strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")); d != "" {
				t.Errorf("stderr (-want +got):\n%s", d)
			}
			b, err := os.ReadFile(calls)
			if err != nil && !errors.Is(err, os.ErrNotExist) {
				t.Fatal(err)
			}
			var got []string
			if len(b) > 0 {
				got = strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
			}
			if d := cmp.Diff(tc.aptCalls, got); d != "" {
				t.Errorf("apt-get calls (-want +got):\n%s", d)
			}
		})
	}
}

// fakeServer is a psql and a pg_ctlcluster over a state directory, in
// bash alone (PATH holds nothing else): psql answers SHOW with the
// setting's file and records each ALTER SYSTEM, which a restart
// (pg_ctlcluster … restart, recorded) applies.
var fakeServer = map[string]string{
	"psql": `state=$FAKE_PG
while (($#)); do
	case $1 in
	-c)
		case $2 in
		"SHOW "*) echo "$(<"$state/${2#SHOW }")" ;;
		"ALTER SYSTEM SET "*)
			set -- "$1" "${2#ALTER SYSTEM SET }" "${@:3}"
			echo "ALTER SYSTEM SET $2" >>"$state/calls"
			echo "${2#* = }" >"$state/pending-${2%% = *}"
			;;
		esac
		shift 2 ;;
	*) shift ;;
	esac
done`,
	"pg_ctlcluster": `echo "pg_ctlcluster $*" >>"$FAKE_PG/calls"
for f in "$FAKE_PG"/pending-*; do
	[[ -s $f ]] && echo "$(<"$f")" >"$FAKE_PG/${f##*/pending-}" && : >"$f"
done
exit 0`,
	"pg_isready": `exit 0`,
}

// Before the restart, one line names each setting changed, from what to
// what; settings already enough are left as they are.
func TestPostgresLogical(t *testing.T) {
	for _, tc := range []struct {
		name                  string
		level, slots, senders string
		want                  string // the line
		calls                 []string
	}{
		{"all three", "replica", "10", "10",
			"setting PostgreSQL 15/main's wal_level from replica to logical, max_replication_slots from 10 to 40, max_wal_senders from 10 to 40, and restarting it",
			[]string{"ALTER SYSTEM SET wal_level = logical", "ALTER SYSTEM SET max_replication_slots = 40", "ALTER SYSTEM SET max_wal_senders = 40",
				"pg_ctlcluster --skip-systemctl-redirect 15 main restart"}},
		{"only the slots", "logical", "12", "64",
			"setting PostgreSQL 15/main's max_replication_slots from 12 to 40, and restarting it",
			[]string{"ALTER SYSTEM SET max_replication_slots = 40", "pg_ctlcluster --skip-systemctl-redirect 15 main restart"}},
		{"nothing to change", "logical", "40", "100", "", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			state := t.TempDir()
			for name, v := range map[string]string{"wal_level": tc.level, "max_replication_slots": tc.slots, "max_wal_senders": tc.senders} {
				if err := os.WriteFile(filepath.Join(state, name), []byte(v+"\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			env := []string{"PATH=" + fakeBin(t, fakeServer), "FAKE_PG=" + state, "PGHOST=127.0.0.1", "PGPORT=5432", "PGUSER=postgres"}
			code, _, stderr := bash(t, env, `POSTGRES_CLUSTER="15 main"; postgres_logical`)
			if code != 0 {
				t.Fatalf("exit %d\n%s", code, stderr)
			}
			if got := strings.TrimSuffix(stderr, "\n"); got != tc.want {
				t.Errorf("stderr:\n%s\nwant:\n%s", got, tc.want)
			}
			var calls []string
			if b, err := os.ReadFile(filepath.Join(state, "calls")); err == nil {
				calls = strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
			}
			if d := cmp.Diff(tc.calls, calls); d != "" {
				t.Errorf("commands (-want +got):\n%s", d)
			}
		})
	}
	t.Run("no cluster to restart", func(t *testing.T) {
		state := t.TempDir()
		for name, v := range map[string]string{"wal_level": "replica", "max_replication_slots": "40", "max_wal_senders": "40"} {
			if err := os.WriteFile(filepath.Join(state, name), []byte(v+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		env := []string{"PATH=" + fakeBin(t, fakeServer), "FAKE_PG=" + state, "PGHOST=db.example", "PGPORT=5432", "PGUSER=postgres"}
		code, _, stderr := bash(t, env, `postgres_logical`)
		want := "PostgreSQL needs wal_level from replica to logical for the follow tests (ALTER SYSTEM SET …, then restart the server)\n"
		if code != 1 || stderr != want {
			t.Errorf("exit %d, stderr %q; want 1 and %q", code, stderr, want)
		}
	})
}

// A server that answers is used as it is: postgres_ensure only asks it.
func TestPostgresFound(t *testing.T) {
	u, err := neturl.Parse(testenv.AdminURL())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := exec.LookPath("pg_isready"); err != nil {
		t.Skip("no pg_isready here")
	}
	port := u.Port()
	if port == "" {
		port = "5432"
	}
	env := []string{"PATH=" + os.Getenv("PATH"), "PGHOST=" + u.Hostname(), "PGPORT=" + port}
	code, stdout, stderr := bash(t, env, `postgres_ensure && echo "$PGHOST:$PGPORT"`)
	if code != 0 || stdout != u.Hostname()+":"+port+"\n" || stderr != "" {
		t.Errorf("exit %d, stdout %q, stderr %q; want 0, the server's address and nothing said", code, stdout, stderr)
	}
}
