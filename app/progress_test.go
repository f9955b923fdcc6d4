package app

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"syscall"
	"testing"
	"time"

	"github.com/pg2dynamo/pg2dynamo/internal/testenv"
)

// A real pg2dynamo process drawing --progress bars (here on a pipe: the
// flag asks for them without a terminal) and stopped with SIGINT part-way
// exits with 130 after printing its summary, as with --progress lines.
// (Its bars never reached their totals, and mpb's Wait waited for them
// forever.)
func TestSIGINTWithProgressBars(t *testing.T) {
	parallel(t)
	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	bin := buildBinary(t)
	url, _ := fixtureSource(t, "tickets", 1)
	cmd := exec.Command(bin, migrateArgs(t, filepath.Join(root, "fixtures", "mappings", "tickets.yaml"), url, testenv.TableName("tickets"),
		"--create-table", "--no-verify", "--progress", "bars")...)
	var out bytes.Buffer
	errOut := &syncBuffer{}
	started := make(chan struct{})
	// A frame of the Ticket bar with rows done: "Ticket 1234 / 20000 ...".
	moving := regexp.MustCompile(`Ticket\s+[1-9][0-9]* ?/ ?[0-9]+`)
	var once bool
	errOut.onWrite = func(s string) {
		if !once && moving.MatchString(s) {
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
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("no Ticket bar moving within 60s:\n%s", errOut.String())
	}
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err = <-done:
	case <-time.After(20 * time.Second):
		cmd.Process.Kill()
		<-done
		t.Fatalf("still running 20s after SIGINT\n%s", out.String())
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 130 {
		t.Fatalf("exit %v, want 130\n%s", err, out.String())
	}
	if got := summaryTotal(t, out.String()); got[0] == "0" || got[0] == "22020" {
		t.Errorf("summary total %v: want some rows read, not all 22020", got)
	}
}

// The first signal cancels the run with the signal as the cause; the
// second ends the process with 128 + its number.
func TestSecondSignalExits(t *testing.T) {
	sigs := make(chan os.Signal, 2)
	ctx, cancel := context.WithCancelCause(context.Background())
	exited := make(chan syscall.Signal, 1)
	done := make(chan struct{})
	go func() {
		watchSignals(sigs, cancel, func(sig syscall.Signal) { exited <- sig })
		close(done)
	}()
	sigs <- os.Interrupt
	<-ctx.Done()
	var se signalError
	if !errors.As(context.Cause(ctx), &se) || se.sig != syscall.SIGINT {
		t.Errorf("cause %v, want SIGINT", context.Cause(ctx))
	}
	select {
	case sig := <-exited:
		t.Fatalf("exit(%v) after one signal", sig)
	case <-time.After(50 * time.Millisecond):
	}
	sigs <- syscall.SIGTERM
	<-done
	if sig := <-exited; sig != syscall.SIGTERM {
		t.Errorf("exit(%v), want SIGTERM", sig)
	}
}
