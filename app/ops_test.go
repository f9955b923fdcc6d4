package app

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/pg2dynamo/pg2dynamo/tools/testenv"
)

// The operations flags refused before anything is written (exit 2): an
// address in use, an unknown log format, --max-lag without a follow and
// a metrics server, cutover's --timeout without --wait. None of them
// creates the rejects file.
func TestOpsFlagsRefusedBeforeWriting(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	mappingFile := testenv.RepoFile(t, "fixtures", "mappings", "customers.yaml")
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"port in use", []string{"migrate", "--metrics-addr", ln.Addr().String()}, "--metrics-addr " + ln.Addr().String() + ": listen tcp"},
		{"log format", []string{"--log-format", "xml", "migrate"}, `--log-format "xml": expected text or json`},
		{"max-lag without follow", []string{"migrate", "--max-lag", "1s", "--metrics-addr", "127.0.0.1:0"}, "--max-lag needs --follow and --metrics-addr"},
		{"max-lag without metrics", []string{"migrate", "--follow", "--max-lag", "1s"}, "--max-lag needs --follow and --metrics-addr"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rejects := filepath.Join(t.TempDir(), "rejects.jsonl")
			args := append(tc.args, "--mapping", mappingFile, "--source", "postgres://nobody@127.0.0.1:1/none", "--rejects", rejects)
			r := runCLI(t, args...)
			if r.code != ExitUsage || !strings.Contains(r.stderr, tc.want) {
				t.Errorf("exit %d, want %d with %q\n%s", r.code, ExitUsage, tc.want, r.stderr)
			}
			if _, err := os.Stat(rejects); !os.IsNotExist(err) {
				t.Errorf("the rejects file exists after a refused run (%v)", err)
			}
		})
	}
	// Port 0: the run names the port it listens on.
	r := runCLI(t, "migrate", "--metrics-addr", "127.0.0.1:0", "--mapping", mappingFile, "--source", "postgres://nobody@127.0.0.1:1/none")
	if m := regexp.MustCompile(`serving /metrics and /healthz on http://127\.0\.0\.1:([0-9]+)\n`).FindStringSubmatch(r.stderr); m == nil || m[1] == "0" {
		t.Errorf("--metrics-addr 127.0.0.1:0: the port listened on is not named\n%s", r.stderr)
	}
	r = runCLI(t, "cutover", "--mapping", mappingFile, "--timeout", "1s")
	if r.code != ExitUsage || !strings.Contains(r.stderr, "--timeout without --wait") {
		t.Errorf("cutover --timeout without --wait: exit %d\n%s", r.code, r.stderr)
	}
}

// Under --log-format json, a usage error of the command's flags is a
// JSON record too: level ERROR, the command, the exit code.
func TestJSONLogOfAUsageError(t *testing.T) {
	r := runCLI(t, "--log-format", "json", "migrate", "--no-such-flag")
	if r.code != ExitUsage {
		t.Fatalf("exit %d, want %d\n%s", r.code, ExitUsage, r.stderr)
	}
	lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
	var rec map[string]any
	if len(lines) != 1 || json.Unmarshal([]byte(lines[0]), &rec) != nil {
		t.Fatalf("stderr, want one JSON object:\n%s", r.stderr)
	}
	if rec["level"] != "ERROR" || rec["command"] != "migrate" || rec["exit_code"] != float64(ExitUsage) ||
		!strings.Contains(rec["msg"].(string), "flag provided but not defined: -no-such-flag") {
		t.Errorf("record %v", rec)
	}
}

// jsonLog: a line written in parts is one record, a last line without
// its newline is written by Flush, empty lines are none, and the fields
// of With and Log are on the records.
func TestJSONLog(t *testing.T) {
	var out bytes.Buffer
	l := newJSONLog(&out, slog.String("command", "migrate"))
	l.Write([]byte("migrating 3 entities"))
	l.Write([]byte(" from db\n\n"))
	l.With(slog.String("table", "shop"))
	l.Log("follow: applied 0/10", slog.String("lsn", "0/10"), slog.Int64("lag_bytes", 5))
	l.Write([]byte("no newline"))
	l.Flush()
	var got []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		delete(rec, "time")
		got = append(got, rec)
	}
	want := []map[string]any{
		{"level": "INFO", "msg": "migrating 3 entities from db", "command": "migrate"},
		{"level": "INFO", "msg": "follow: applied 0/10", "command": "migrate", "table": "shop", "lsn": "0/10", "lag_bytes": float64(5)},
		{"level": "INFO", "msg": "no newline", "command": "migrate", "table": "shop"},
	}
	if len(got) != len(want) {
		t.Fatalf("%d records, want %d:\n%s", len(got), len(want), out.String())
	}
	for i := range want {
		for k, v := range want[i] {
			if got[i][k] != v {
				t.Errorf("record %d: %s = %v, want %v", i, k, got[i][k], v)
			}
		}
		if len(got[i]) != len(want[i]) {
			t.Errorf("record %d: %v, want %v", i, got[i], want[i])
		}
	}
}
