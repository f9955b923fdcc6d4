package testenv

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	neturl "net/url"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// TestDynaliteSurvivesAbortedRequest: a client that goes away in the middle
// of a request body (a pg2dynamo killed during a BatchWriteItem) must not end
// the shared server (scripts/dynalite-guard.cjs).
func TestDynaliteSurvivesAbortedRequest(t *testing.T) {
	d, err := StartDynalite()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.Stop)
	addr := strings.TrimPrefix(d.Endpoint, "http://")
	for range 3 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		// Half of a 1000-byte body, then a reset (SO_LINGER 0).
		fmt.Fprintf(c, "POST / HTTP/1.1\r\nHost: %s\r\nContent-Type: application/x-amz-json-1.0\r\n"+
			"X-Amz-Target: DynamoDB_20120810.BatchWriteItem\r\nContent-Length: 1000\r\n\r\n%s", addr, strings.Repeat("x", 500))
		time.Sleep(100 * time.Millisecond)
		c.(*net.TCPConn).SetLinger(0)
		c.Close()
	}
	time.Sleep(300 * time.Millisecond)
	status, body, err := dynamoRequest(d.Endpoint, "ListTables", "{}")
	if err != nil {
		t.Fatalf("dynalite no longer answers after clients went away mid-request: %v", err)
	}
	if !strings.Contains(body, "TableNames") {
		t.Fatalf("ListTables: %s %s", status, body)
	}
}

// A dynalite whose starter dies without stopping it (a test binary killed at
// go test's -timeout) exits too (scripts/dynalite-guard.cjs): a copy of this
// test binary starts one and is killed, and the server must then go.
func TestDynaliteEndsWithItsStarter(t *testing.T) {
	if os.Getenv("PG2DYNAMO_TESTENV_STARTER") != "" {
		d, err := StartDynalite()
		if err != nil {
			fmt.Println("error:", err)
			os.Exit(1)
		}
		fmt.Printf("dynalite %d %s\n", d.cmd.Process.Pid, d.Endpoint)
		time.Sleep(time.Hour) // until killed
	}
	if runtime.GOOS != "linux" {
		t.Skip("tells a process's end from /proc")
	}
	starter := exec.Command(os.Args[0], "-test.run", "^TestDynaliteEndsWithItsStarter$")
	starter.Env = append(os.Environ(), "PG2DYNAMO_TESTENV_STARTER=1")
	starter.Stderr = os.Stderr
	out, err := starter.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := starter.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	var pid int
	var endpoint string
	if _, serr := fmt.Sscanf(line, "dynalite %d %s", &pid, &endpoint); serr != nil {
		starter.Process.Kill()
		starter.Wait()
		t.Fatalf("the starter said %q (%v), not its dynalite", line, err)
	}
	t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
	if _, _, err := dynamoRequest(endpoint, "ListTables", "{}"); err != nil {
		t.Fatalf("the starter's dynalite does not answer: %v", err)
	}
	if err := starter.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	starter.Wait()
	var never <-chan struct{}
	if err := Poll("dynalite to exit once its starter was killed", time.Minute, never, func() bool { return !running(pid) }); err != nil {
		t.Fatal(err)
	}
}

// running reports whether process pid exists and has not exited (a zombie,
// not yet reaped, has).
func running(pid int) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// pid (comm) state …: the state follows the last ')'.
	rest := bytes.TrimSpace(stat[bytes.LastIndexByte(stat, ')')+1:])
	return len(rest) > 0 && rest[0] != 'Z'
}

// dynamoRequest sends one DynamoDB API call (target, JSON body) to endpoint
// and returns the answer's status line and body.
func dynamoRequest(endpoint, target, body string) (status, answer string, err error) {
	req, _ := http.NewRequest(http.MethodPost, endpoint, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/x-amz-json-1.0")
	req.Header.Set("X-Amz-Target", "DynamoDB_20120810."+target)
	req.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential=x/20260101/us-east-1/dynamodb/aws4_request, SignedHeaders=host, Signature=x")
	req.Header.Set("X-Amz-Date", "20260101T000000Z")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", "", err
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	return resp.Status, string(out), err
}

// TestDynaliteListsATablesTags: the guard's ListTagsOfResource (bounded to
// one table's tags, scripts/dynalite-guard.cjs) gives each table its own tags,
// of a table whose name another's begins with too, in key order.
func TestDynaliteListsATablesTags(t *testing.T) {
	d, err := StartDynalite()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.Stop)
	call := func(target, body string) string {
		t.Helper()
		status, out, err := dynamoRequest(d.Endpoint, target, body)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(status, "200 ") {
			t.Fatalf("%s: %s %s", target, status, out)
		}
		return out
	}
	arn := func(table string) string { return "arn:aws:dynamodb:us-east-1:000000000000:table/" + table }
	tags := map[string]string{
		"tags-a":  `[{"Key":"b","Value":"2"},{"Key":"a","Value":"1"}]`,
		"tags-a2": `[{"Key":"z","Value":"9"}]`,
	}
	for table, tt := range tags {
		call("CreateTable", `{"TableName":"`+table+`","KeySchema":[{"AttributeName":"PK","KeyType":"HASH"}],`+
			`"AttributeDefinitions":[{"AttributeName":"PK","AttributeType":"S"}],"BillingMode":"PAY_PER_REQUEST"}`)
		call("TagResource", `{"ResourceArn":"`+arn(table)+`","Tags":`+tt+`}`)
	}
	want := map[string]string{
		"tags-a":  `{"Tags":[{"Key":"a","Value":"1"},{"Key":"b","Value":"2"}]}`,
		"tags-a2": `{"Tags":[{"Key":"z","Value":"9"}]}`,
	}
	for table, w := range want {
		if got := call("ListTagsOfResource", `{"ResourceArn":"`+arn(table)+`"}`); got != w {
			t.Errorf("tags of %s: %s, want %s", table, got, w)
		}
	}
}

// A test's database is dropped with whatever still uses it: a session
// idle in a transaction, and a walsender streaming from a logical
// replication slot of the database (a follow the test did not stop),
// which DROP DATABASE … WITH (FORCE) alone refuses ("database … is used
// by an active logical replication slot"). The slot goes with it.
func TestDropEndsWhatUsesTheDatabase(t *testing.T) {
	url, drop, err := CreateDatabase()
	if err != nil {
		t.Fatal(err)
	}
	dropped := false
	t.Cleanup(func() {
		if !dropped {
			if err := drop(); err != nil {
				t.Error(err)
			}
		}
	})
	ctx := context.Background()
	session := Connect(t, url)
	if _, err := session.Exec(ctx, "BEGIN; SELECT 1", pgx.QueryExecModeSimpleProtocol); err != nil {
		t.Fatal(err)
	}
	var level string
	if err := session.QueryRow(ctx, "SHOW wal_level").Scan(&level); err != nil {
		t.Fatal(err)
	}
	if level != "logical" {
		t.Fatalf("wal_level is %s: this test needs logical (scripts/test.sh sets it)", level)
	}
	cfg, err := pgconn.ParseConfig(url)
	if err != nil {
		t.Fatal(err)
	}
	cfg.RuntimeParams["replication"] = "database"
	repl, err := pgconn.ConnectConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer repl.Close(ctx)
	slot := "pg2d_test_drop_" + randomHex(4)
	if _, err := pglogrepl.CreateReplicationSlot(ctx, repl, slot, "pgoutput", pglogrepl.CreateReplicationSlotOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := pglogrepl.StartReplication(ctx, repl, slot, 0, pglogrepl.StartReplicationOptions{
		PluginArgs: []string{"proto_version '1'", "publication_names 'none'"}}); err != nil {
		t.Fatal(err)
	}
	admin := Connect(t, AdminURL())
	var active bool
	if err := admin.QueryRow(ctx, "SELECT active FROM pg_replication_slots WHERE slot_name = $1", slot).Scan(&active); err != nil || !active {
		t.Fatalf("slot %s: active %v, %v; want it streaming before the drop", slot, active, err)
	}

	err = drop()
	dropped = true
	if err != nil {
		t.Fatal(err)
	}
	name := strings.TrimPrefix(mustParse(t, url).Path, "/")
	var databases, slots int
	if err := admin.QueryRow(ctx, `SELECT (SELECT count(*) FROM pg_database WHERE datname = $1),
		(SELECT count(*) FROM pg_replication_slots WHERE slot_name = $2)`, name, slot).Scan(&databases, &slots); err != nil {
		t.Fatal(err)
	}
	if databases != 0 || slots != 0 {
		t.Errorf("after the drop: %d databases named %s, %d slots named %s; want none", databases, name, slots, slot)
	}
}

func mustParse(t *testing.T, rawURL string) *neturl.URL {
	t.Helper()
	u, err := neturl.Parse(rawURL)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// Only what a busy server answers for a while is tried again.
func TestRetryable(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{&pgconn.PgError{Code: "55006", Message: `database "x" is being accessed by other users`}, true},
		{fmt.Errorf("connect: %w", &pgconn.PgError{Code: "53300", Message: "sorry, too many clients already"}), true},
		{&pgconn.PgError{Code: "57P03", Message: "the database system is starting up"}, true},
		{&pgconn.PgError{Code: "42501", Message: "must be owner of database x"}, false},
		{context.DeadlineExceeded, false},
		{errors.New("dial tcp 127.0.0.1:5432: connect: connection refused"), false},
	} {
		if got := retryable(tc.err); got != tc.want {
			t.Errorf("retryable(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}
