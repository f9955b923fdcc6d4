// Package testenv gives tests the real services they run against: a fresh
// PostgreSQL database per test on the local server, and a dynalite process
// (the DynamoDB-compatible server pinned in package.json) per test binary.
//
// Nothing here is a mock: PostgreSQL is reached over TCP at PGHOST/PGPORT
// (default 127.0.0.1:5432, user postgres, trust auth) and dynalite over HTTP
// on a free loopback port.
package testenv

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	neturl "net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// AdminURL is the connection string of the maintenance database used to
// create and drop per-test databases. PG2DYNAMO_TEST_PG overrides it.
func AdminURL() string {
	if u := os.Getenv("PG2DYNAMO_TEST_PG"); u != "" {
		return u
	}
	return "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"
}

// NewDatabase creates an empty database with a random name, drops it (with
// FORCE) when the test ends, and returns its connection string. The test
// fails at once if the server cannot be reached.
func NewDatabase(t testing.TB) string {
	t.Helper()
	url, drop, err := CreateDatabase()
	if err != nil {
		t.Fatalf("testenv: %v", err)
	}
	t.Cleanup(func() {
		if err := drop(); err != nil {
			t.Logf("testenv: %v", err)
		}
	})
	return url
}

// CreateDatabase creates an empty database with a random name and returns
// its connection string and a function that drops it (with FORCE), for a
// database that outlives one test (shared by a test binary's tests, dropped
// in TestMain). It fails if the server cannot be reached.
func CreateDatabase() (url string, drop func() error, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	admin, err := pgx.Connect(ctx, AdminURL())
	if err != nil {
		return "", nil, fmt.Errorf("connect to PostgreSQL (%s): %w", AdminURL(), err)
	}
	defer admin.Close(context.Background())
	u, err := neturl.Parse(AdminURL())
	if err != nil {
		return "", nil, fmt.Errorf("admin url: %w", err)
	}
	name := "pg2d_test_" + randomHex(6)
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
		return "", nil, fmt.Errorf("create database: %w", err)
	}
	drop = func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		c, err := pgx.Connect(ctx, AdminURL())
		if err != nil {
			return fmt.Errorf("drop %s: %w", name, err)
		}
		defer c.Close(ctx)
		if _, err := c.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)"); err != nil {
			return fmt.Errorf("drop %s: %w", name, err)
		}
		return nil
	}
	u.Path = "/" + name
	return u.String(), drop, nil
}

// Connect opens a connection to url and closes it when the test ends.
func Connect(t testing.TB, url string) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Fatalf("testenv: connect: %v", err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

// Exec runs sql on url (a whole script is fine: simple protocol) or fails the test.
func Exec(t testing.TB, url, sql string) {
	t.Helper()
	conn := Connect(t, url)
	if _, err := conn.Exec(context.Background(), sql, pgx.QueryExecModeSimpleProtocol); err != nil {
		t.Fatalf("testenv: exec: %v", err)
	}
}

// Dynalite is a running dynalite server.
type Dynalite struct {
	// Endpoint is the server's base URL, e.g. "http://127.0.0.1:41234".
	Endpoint string
	cmd      *exec.Cmd
}

var (
	dynOnce sync.Once
	dyn     *Dynalite
	dynErr  error
)

// SharedDynalite returns the dynalite server of this test binary, starting it
// on first use. Tests sharing it must use distinct table names (see
// TableName). Call StopDynalite from TestMain to stop it.
func SharedDynalite(t testing.TB) *Dynalite {
	t.Helper()
	dynOnce.Do(func() { dyn, dynErr = StartDynalite() })
	if dynErr != nil {
		t.Fatalf("testenv: %v", dynErr)
	}
	return dyn
}

// UseDynaliteCredentials sets what the AWS SDK needs to sign requests to
// dynalite, which accepts any credentials: dummy access keys, region
// us-east-1, and no EC2 metadata lookup.
func UseDynaliteCredentials() {
	os.Setenv("AWS_ACCESS_KEY_ID", "test")
	os.Setenv("AWS_SECRET_ACCESS_KEY", "test")
	os.Setenv("AWS_REGION", "us-east-1")
	os.Setenv("AWS_EC2_METADATA_DISABLED", "true")
}

// Main is the TestMain of a package whose tests use dynalite:
// UseDynaliteCredentials, the tests, then StopDynalite.
func Main(m *testing.M) {
	UseDynaliteCredentials()
	code := m.Run()
	StopDynalite()
	os.Exit(code)
}

// StopDynalite stops the shared server if it was started.
func StopDynalite() {
	if dyn != nil {
		dyn.Stop()
	}
}

// StartDynalite starts dynalite in memory with --createTableMs 0 (and the
// other table-state delays at 0) on a free loopback port and waits until it
// accepts connections. It needs `npm ci` to have been run in the repository
// root.
func StartDynalite() (*Dynalite, error) { return StartDynaliteCreating(0) }

// StartDynaliteCreating is StartDynalite with a table CREATING for
// createTable after CreateTable (--createTableMs, in whole milliseconds),
// as DynamoDB's tables are for seconds: for the tests of what a client
// does while another's table is not ACTIVE yet.
func StartDynaliteCreating(createTable time.Duration) (*Dynalite, error) {
	root, err := RepoRoot()
	if err != nil {
		return nil, err
	}
	port, err := FreePort()
	if err != nil {
		return nil, err
	}
	args, err := dynaliteArgs(root, port, createTable)
	if err != nil {
		return nil, fmt.Errorf("%w (run `npm ci` in %s)", err, root)
	}
	cmd := exec.Command("node", args...)
	cmd.Stdout = os.Stderr
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start dynalite: %w", err)
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	deadline := time.Now().Add(20 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
		if err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			return nil, fmt.Errorf("dynalite did not listen on %s within 20s", addr)
		}
		time.Sleep(50 * time.Millisecond)
	}
	return &Dynalite{Endpoint: "http://" + addr, cmd: cmd}, nil
}

// DynaliteArgs returns node's arguments to run the dynalite pinned in the
// repository at root (node_modules, from npm ci) in memory on 127.0.0.1:port,
// with the table-state delays (--createTableMs and the others) at 0, and
// with scripts/dynalite-guard.cjs preloaded so that a client that goes away
// mid-request does not end the server (see that file). It fails when
// dynalite is not installed.
func DynaliteArgs(root string, port int) ([]string, error) { return dynaliteArgs(root, port, 0) }

// dynaliteArgs is DynaliteArgs with tables CREATING for createTable.
func dynaliteArgs(root string, port int, createTable time.Duration) ([]string, error) {
	cli := filepath.Join(root, "node_modules", "dynalite", "cli.js")
	if _, err := os.Stat(cli); err != nil {
		return nil, fmt.Errorf("dynalite is not installed: %w", err)
	}
	guard := filepath.Join(root, "scripts", "dynalite-guard.cjs")
	return []string{"--require", guard, cli, "--host", "127.0.0.1", "--port", strconv.Itoa(port),
		"--createTableMs", strconv.FormatInt(createTable.Milliseconds(), 10), "--deleteTableMs", "0", "--updateTableMs", "0"}, nil
}

// Stop kills the server and waits for it.
func (d *Dynalite) Stop() {
	if d.cmd != nil && d.cmd.Process != nil {
		_ = d.cmd.Process.Kill()
		_, _ = d.cmd.Process.Wait()
	}
}

// FreePort asks the kernel for a free TCP port on 127.0.0.1.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// TableName returns a DynamoDB table name unique to this call.
func TableName(prefix string) string { return prefix + "-" + randomHex(5) }

// RepoRoot finds the module root (the directory holding go.mod) from the
// working directory upward.
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("go.mod not found above the working directory")
		}
		dir = parent
	}
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
