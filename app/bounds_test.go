package app

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pg2dynamo/pg2dynamo/mapping"
	"github.com/pg2dynamo/pg2dynamo/tools/testenv"
)

// processResult is how a real pg2dynamo process ended.
type processResult struct {
	code           int
	stdout, stderr string
}

// startProcess starts cmd in a process group of its own, so that
// waitProcess can kill it with its children.
func startProcess(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
}

// waitProcess waits at most limit (eventWait: a bound on a hang, not on
// speed) for cmd (started by startProcess, with its output in stdout and
// stderr) to end, killing its process group past that and failing the
// test with the command and its stderr.
func waitProcess(t *testing.T, cmd *exec.Cmd, limit time.Duration, stdout, stderr *bytes.Buffer) processResult {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-time.After(limit):
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
		t.Fatalf("waiting for %s to exit: still running after %v\n%s", strings.Join(cmd.Args, " "), limit, stderr.String())
	}
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatal(err)
	}
	return processResult{code: cmd.ProcessState.ExitCode(), stdout: stdout.String(), stderr: stderr.String()}
}

// aliasBomb is a "billion laughs" inside known fields of a mapping: each
// anchor is nine uses of the one before, 9^9 strings once expanded. It
// took the process to 2 GB and 95 s before its type error.
func aliasBomb() string {
	var b strings.Builder
	b.WriteString("table: {name: shop}\nentities:\n  A:\n    source: {table: t}\n    pk: A\n    attributes:\n")
	b.WriteString(`      select: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]` + "\n      rename:\n")
	for i := 1; i <= 8; i++ {
		fmt.Fprintf(&b, "        k%d: &a%d [%s]\n", i, i, strings.TrimSuffix(strings.Repeat(fmt.Sprintf("*a%d,", i-1), 9), ","))
	}
	return b.String()
}

// Hostile mappings, given to a real process: an alias bomb and a 10 MB
// mapping are refused with a mapping error naming the bound, under 100 MB
// of memory; SIGTERM while the mapping is read (from a FIFO kept open:
// unhonoured, the process would wait for ever) or parsed ends the
// process with 143. How soon is logged, not asserted: the parse takes
// about a second unloaded, and a bound on seconds measures the machine.
func TestHostileMappingProcess(t *testing.T) {
	parallel(t)
	bin := buildBinary(t)
	url := testenv.NewDatabase(t)
	dir := t.TempDir()

	for _, tc := range []struct {
		name, data, want string
	}{
		{"alias bomb", aliasBomb(), "bomb.yaml:13:18: entities.A.attributes.rename.k5[0]: aliases expand the mapping by more than 100000 YAML nodes"},
		{"10 MB mapping", func() string {
			var b strings.Builder
			b.WriteString("table: {name: shop}\nentities:\n")
			for i := range 142_773 {
				fmt.Fprintf(&b, "  E%d:\n    source: {table: t}\n    pk: A#${id}\n    sk: E%d#${id}\n", i, i)
			}
			return b.String()
		}(), "big.yaml: the file is larger than 262144 bytes (256 KiB): a mapping file is at most 262144 bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, strings.Fields(tc.want)[0])
			path = strings.TrimSuffix(path[:strings.Index(path, ".yaml")], ":") + ".yaml"
			if err := os.WriteFile(path, []byte(tc.data), 0o600); err != nil {
				t.Fatal(err)
			}
			var stdout, stderr bytes.Buffer
			cmd, peak := testenv.WithPeakRSS(t, bin, "plan", "--mapping", path)
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			start := time.Now()
			startProcess(t, cmd)
			r := waitProcess(t, cmd, eventWait, &stdout, &stderr)
			mb := peak.MB(t)
			t.Logf("%d bytes: exit %d in %v, peak RSS %.1f MB", len(tc.data), r.code, time.Since(start).Round(time.Millisecond), mb)
			if r.code != ExitUsage || !strings.Contains(r.stderr, filepath.Join(dir, tc.want)) {
				t.Errorf("exit %d, want %d and %q\n%s", r.code, ExitUsage, tc.want, r.stderr)
			}
			if mb == 0 || mb > 100 {
				t.Errorf("peak RSS %.1f MB, want under 100", mb)
			}
		})
	}

	// The slowest shape to parse inside the bounds: a flow list of
	// one-letter items filling MaxFileBytes (about a second here).
	large := "table: {name: shop}\nentities:\n  A:\n    source: {table: t}\n    pk: A\n    attributes:\n      select: ["
	large += strings.Repeat("a,", (mapping.MaxFileBytes-len(large)-4)/2) + "a]\n"
	for _, tc := range []struct {
		name string
		data string
		// closed: the whole file is delivered before the signal (it is
		// being parsed), else part of it (it is being read).
		closed bool
	}{
		{"SIGTERM while the mapping is read", "table: {name: shop}\n", false},
		{"SIGTERM during a large parse", large, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// A named pipe: the test decides when the process has the
			// file, and the process cannot be ahead of the signal.
			fifo := filepath.Join(t.TempDir(), "mapping.yaml")
			if err := syscall.Mkfifo(fifo, 0o600); err != nil {
				t.Fatal(err)
			}
			var stdout, stderr bytes.Buffer
			cmd := exec.Command(bin, migrateArgs(t, fifo, url, testenv.TableName("hostile"), "--create-table")...)
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			startProcess(t, cmd)
			w, err := os.OpenFile(fifo, os.O_WRONLY, 0) // blocks until the process opens it
			if err != nil {
				syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
				t.Fatal(err)
			}
			defer w.Close()
			if _, err := w.Write([]byte(tc.data)); err != nil {
				syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
				t.Fatal(err)
			}
			if tc.closed {
				w.Close()
			} else {
				time.Sleep(200 * time.Millisecond)
			}
			signaled := time.Now()
			if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
			r := waitProcess(t, cmd, eventWait, &stdout, &stderr)
			t.Logf("exit %d %v after SIGTERM", r.code, time.Since(signaled).Round(time.Millisecond))
			if r.code != 143 {
				t.Errorf("exit %d after SIGTERM, want 143\n%s", r.code, r.stderr)
			}
		})
	}
}
