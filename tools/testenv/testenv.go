// Package testenv gives tests the real services they run against: a fresh
// PostgreSQL database per test on the local server (AdminURL), and a dynalite
// (pinned in package.json) per test binary on a free loopback port.
package testenv

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	neturl "net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// AdminURL is the maintenance database creating and dropping test databases;
// PG2DYNAMO_TEST_PG overrides it.
func AdminURL() string {
	if u := os.Getenv("PG2DYNAMO_TEST_PG"); u != "" {
		return u
	}
	return "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"
}

// NewDatabase creates an empty, randomly named database, dropped WITH (FORCE)
// when the test ends, and returns its URL. The test fails at once if the server
// is unreachable, and at its end if the drop fails.
func NewDatabase(t testing.TB) string {
	t.Helper()
	url, drop, err := CreateDatabase()
	if err != nil {
		t.Fatalf("testenv: %v", err)
	}
	t.Cleanup(func() {
		if err := drop(); err != nil {
			t.Errorf("testenv: %v", err)
		}
	})
	return url
}

// adminTimeout bounds creating or dropping one database, retries included, well
// above a loaded server's time: DROP DATABASE waits for the backends FORCE ends
// and for its files.
const adminTimeout = 5 * time.Minute

// CreateDatabase creates an empty, randomly named database for a whole test
// binary (dropped in TestMain), returning its URL and a drop function. Both
// retry a busy server's transient answers up to adminTimeout; drop's error says
// how to drop a leftover.
func CreateDatabase() (url string, drop func() error, err error) {
	admin := AdminURL()
	u, err := neturl.Parse(admin)
	if err != nil {
		return "", nil, fmt.Errorf("admin url (PG2DYNAMO_TEST_PG): %w", err)
	}
	server := u.Redacted()
	name := "pg2d_test_" + randomHex(6)
	ident := pgx.Identifier{name}.Sanitize()
	drop = func() error {
		ctx, cancel := context.WithTimeout(context.Background(), adminTimeout)
		defer cancel()
		if err := retryAdmin(ctx, admin, func(ctx context.Context, c *pgx.Conn) error { return dropDatabase(ctx, c, name) }); err != nil {
			return fmt.Errorf("database %s is left behind on %s: %w (drop it with DROP DATABASE %s WITH (FORCE))", name, server, err, ident)
		}
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), adminTimeout)
	defer cancel()
	if err := retryAdmin(ctx, admin, func(ctx context.Context, c *pgx.Conn) error {
		_, err := c.Exec(ctx, "CREATE DATABASE "+ident)
		return err
	}); err != nil {
		err = fmt.Errorf("create database %s on %s: %w", name, server, err)
		if ctx.Err() != nil { // ended mid-statement: it may exist
			if derr := drop(); derr != nil {
				err = fmt.Errorf("%w; %w", err, derr)
			}
		}
		return "", nil, err
	}
	u.Path = "/" + name
	return u.String(), drop, nil
}

// dropDatabase drops name if it exists. WITH (FORCE) does not end a walsender
// streaming from one of its slots (a running follow), so those are ended first;
// DROP DATABASE then drops the slots.
func dropDatabase(ctx context.Context, c *pgx.Conn, name string) error {
	if _, err := c.Exec(ctx, `SELECT pg_terminate_backend(active_pid) FROM pg_replication_slots
		WHERE database = $1 AND active_pid IS NOT NULL`, name); err != nil {
		return err
	}
	_, err := c.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)")
	return err
}

// SQLSTATEs a busy server answers for a while, outlived by retrying
// (https://www.postgresql.org/docs/current/errcodes-appendix.html).
const (
	// "database … is being accessed by other users" (a FORCE-ended backend
	// still exiting), "… is used by an active logical replication slot", and
	// CREATE DATABASE's on template1.
	codeObjectInUse = "55006"
	// Connection slots used up by the tests in parallel.
	codeTooManyConnections = "53300"
	// The server is starting or stopping (scripts/test.sh restarting it).
	codeCannotConnectNow = "57P03"
)

// retryable reports whether err is one a later attempt may not meet.
func retryable(err error) bool {
	var pe *pgconn.PgError
	if !errors.As(err, &pe) {
		return false
	}
	switch pe.Code {
	case codeObjectInUse, codeTooManyConnections, codeCannotConnectNow:
		return true
	}
	return false
}

// retryAdmin runs op on its own admin connection until success, a non-retryable
// error or ctx's end, backing off from 100 ms to 5 s; the error is the last
// attempt's with the count.
func retryAdmin(ctx context.Context, admin string, op func(context.Context, *pgx.Conn) error) error {
	wait := 100 * time.Millisecond
	start := time.Now()
	for attempt := 1; ; attempt++ {
		err := withConn(ctx, admin, op)
		if err == nil {
			return nil
		}
		if !retryable(err) {
			return err
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("still failing after %d attempts in %s: %w", attempt, time.Since(start).Round(time.Second), err)
		case <-t.C:
		}
		wait = min(2*wait, 5*time.Second)
	}
}

// withConn runs op on a new connection to url, closed after.
func withConn(ctx context.Context, url string, op func(context.Context, *pgx.Conn) error) error {
	c, err := pgx.Connect(ctx, url)
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	defer c.Close(context.Background())
	return op(ctx, c)
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

// Exec runs sql on url (a whole script is fine: simple protocol) or fails the
// test.
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
	// exited receives cmd.Wait's result, once.
	exited   chan error
	stopOnce sync.Once
}

var (
	dynOnce sync.Once
	dyn     *Dynalite
	dynErr  error
)

// SharedDynalite returns the test binary's dynalite, started on first use.
// Sharing tests need distinct table names (TableName); TestMain calls
// StopDynalite.
func SharedDynalite(t testing.TB) *Dynalite {
	t.Helper()
	dynOnce.Do(func() { dyn, dynErr = StartDynalite() })
	if dynErr != nil {
		t.Fatalf("testenv: %v", dynErr)
	}
	return dyn
}

// UseDynaliteCredentials sets what the SDK needs to sign for dynalite, which
// takes any: dummy keys, us-east-1, no EC2 metadata.
func UseDynaliteCredentials() {
	os.Setenv("AWS_ACCESS_KEY_ID", "test")
	os.Setenv("AWS_SECRET_ACCESS_KEY", "test")
	os.Setenv("AWS_REGION", "us-east-1")
	os.Setenv("AWS_EC2_METADATA_DISABLED", "true")
}

// Main is the TestMain of dynalite-using tests: UseDynaliteCredentials, the
// tests, then Stop.
func Main(m *testing.M) {
	UseDynaliteCredentials()
	code := m.Run()
	Stop()
	os.Exit(code)
}

// Stop stops the shared dynalite and removes a built peakrss runner, as
// TestMain does after the tests.
func Stop() {
	if dyn != nil {
		dyn.Stop()
	}
	if peakBin != "" {
		os.RemoveAll(filepath.Dir(peakBin))
	}
}

// StartDynalite starts dynalite in memory, table-state delays at 0, on a free
// loopback port, and waits until it accepts connections. It needs `npm ci` at
// the repository root.
func StartDynalite() (*Dynalite, error) { return StartDynaliteCreating(0) }

// StartDynaliteCreating is StartDynalite with tables CREATING for createTable
// after CreateTable (--createTableMs, whole milliseconds), as DynamoDB's are
// for seconds.
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
	cmd.Env = DynaliteEnv()
	cmd.Stdout = os.Stderr
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start dynalite: %w", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	deadline := time.Now().Add(dynaliteStartWait)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			break
		}
		select {
		case err := <-exited:
			return nil, fmt.Errorf("dynalite exited (%v) before it listened on %s", err, addr)
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			<-exited
			return nil, fmt.Errorf("waiting for dynalite to listen on %s: not listening after %s", addr, dynaliteStartWait)
		}
	}
	return &Dynalite{Endpoint: "http://" + addr, cmd: cmd, exited: exited}, nil
}

// dynaliteStartWait bounds a new dynalite's start, much slower on a loaded
// machine.
const dynaliteStartWait = 2 * time.Minute

// DynaliteArgs returns node's arguments to run the dynalite pinned at root
// (node_modules) in memory on 127.0.0.1:port, table-state delays at 0, with
// scripts/dynalite-guard.cjs preloaded so a client leaving mid-request does not
// end it, and --single-threaded-gc, as on two busy cores V8's collector threads
// cost more than they save (docs/development.md). It fails when dynalite is not
// installed.
func DynaliteArgs(root string, port int) ([]string, error) { return dynaliteArgs(root, port, 0) }

// DynaliteEnv is the environment to start dynalite in: this process's, with
// DYNALITE_GUARD_PARENT naming this process, so that the server exits once
// this process is gone, even when it died without stopping it (a test binary
// at go test's -timeout; scripts/dynalite-guard.cjs).
func DynaliteEnv() []string {
	return append(os.Environ(), "DYNALITE_GUARD_PARENT="+strconv.Itoa(os.Getpid()))
}

// dynaliteArgs is DynaliteArgs with tables CREATING for createTable.
func dynaliteArgs(root string, port int, createTable time.Duration) ([]string, error) {
	cli := filepath.Join(root, "node_modules", "dynalite", "cli.js")
	if _, err := os.Stat(cli); err != nil {
		return nil, fmt.Errorf("dynalite is not installed: %w", err)
	}
	guard := filepath.Join(root, "scripts", "dynalite-guard.cjs")
	return []string{"--single-threaded-gc", "--require", guard, cli, "--host", "127.0.0.1", "--port", strconv.Itoa(port),
		"--createTableMs", strconv.FormatInt(createTable.Milliseconds(), 10), "--deleteTableMs", "0", "--updateTableMs", "0"}, nil
}

// Stop kills the server and waits for it; a second Stop does nothing.
func (d *Dynalite) Stop() {
	d.stopOnce.Do(func() {
		_ = d.cmd.Process.Kill()
		<-d.exited
	})
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

// RepoRoot finds the directory holding the product module's go.mod, from the
// working directory upward (so tools/ tests find it too).
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if b, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil && productModule(b) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("the go.mod of module github.com/pg2dynamo/pg2dynamo is not found above the working directory")
		}
		dir = parent
	}
}

// productModule reports whether gomod declares the product module.
func productModule(gomod []byte) bool {
	for line := range strings.Lines(string(gomod)) {
		if f := strings.Fields(line); len(f) == 2 && f[0] == "module" {
			return f[1] == "github.com/pg2dynamo/pg2dynamo"
		}
	}
	return false
}

// RepoFile is the path of repository file elems below the root, or fails t.
func RepoFile(t testing.TB, elems ...string) string {
	t.Helper()
	root, err := RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(append([]string{root}, elems...)...)
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// WriteFile writes content to path with mode (past the umask), or fails t.
func WriteFile(t testing.TB, path, content string, mode os.FileMode) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
}

// Symlink makes link point at target and returns link, or fails t.
func Symlink(t testing.TB, target, link string) string {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	return link
}

// ReadFile returns path's content, "<absent>" for no file, or fails t.
func ReadFile(t testing.TB, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return "<absent>"
	}
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
