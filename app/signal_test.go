package app

import (
	"bytes"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pg2dynamo/pg2dynamo/tools/testenv"
)

// A real pg2dynamo process stopped with SIGTERM part-way exits with 143
// after printing its summary; the table holds exactly the rows it says it
// wrote.
func TestSIGTERMStopsCleanly(t *testing.T) {
	parallel(t)
	bin := buildBinary(t)
	url, _ := fixtureSource(t, "tickets", 1)
	table := testenv.TableName("tickets")
	cmd := exec.Command(bin, migrateArgs(t, testenv.RepoFile(t, "fixtures", "mappings", "tickets.yaml"), url, table,
		"--create-table", "--no-verify", "--progress", "lines", "--progress-interval", "50ms")...)
	var out bytes.Buffer
	errOut := &syncBuffer{}
	started := make(chan struct{})
	var once bool
	errOut.onLine = func(s string) {
		if !once && strings.HasPrefix(s, "Ticket: ") && strings.Contains(s, "rows done") {
			once = true
			close(started)
		}
	}
	cmd.Stdout, cmd.Stderr = &out, errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-started:
	case <-time.After(eventWait):
		cmd.Process.Kill()
		t.Fatalf("waiting for Ticket progress: none in %s\n%s", eventWait, errOut.String())
	}
	stopProcess(t, cmd, syscall.SIGTERM, 143, &out, errOut)
	n := len(scanAll(t, dynamoClient(t), table))
	if got := summaryTotal(t, out.String()); got[1] != itoa(int64(n)) || n == 0 || n >= 22020 {
		t.Errorf("summary %v; the table holds %d items (want some, not all 22020, and the summary's count)", got, n)
	}
}

// stopProcess sends sig to the running cmd and fails t unless it exits
// with code within eventWait; out and errOut are its output, for the
// message.
func stopProcess(t *testing.T, cmd *exec.Cmd, sig syscall.Signal, code int, out, errOut fmt.Stringer) {
	t.Helper()
	if err := cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-time.After(eventWait):
		cmd.Process.Kill()
		<-done
		t.Fatalf("waiting for the process to exit after %s: still running after %s\n%s%s", sig, eventWait, out, errOut)
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != code {
		t.Fatalf("exit %v after %s, want %d\n%s%s", err, sig, code, out, errOut)
	}
}
