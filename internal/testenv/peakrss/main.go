// Command peakrss runs a command and writes the command's peak resident
// set size, in kilobytes, to a file: peakrss FILE COMMAND [ARG...].
//
// A test cannot read that figure from its own child: Go starts a child
// with vfork (CLONE_VM), so the kernel carries the test binary's peak into
// the child's ru_maxrss; this small runner's own peak is below the
// command's. SIGINT and SIGTERM are passed on, the command is killed if
// the runner dies, and the exit code is the command's (125 when the
// runner itself fails).
package main

import (
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
)

func main() {
	if len(os.Args) < 3 {
		fmt.Fprintln(os.Stderr, "usage: peakrss FILE COMMAND [ARG...]")
		os.Exit(125)
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	cmd := exec.Command(os.Args[2], os.Args[3:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	// A runner killed outright (a test's cleanup) takes the command with it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "peakrss:", err)
		os.Exit(125)
	}
	go func() {
		for s := range sigs {
			_ = cmd.Process.Signal(s)
		}
	}()
	_ = cmd.Wait()
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		os.Exit(125)
	}
	if err := os.WriteFile(os.Args[1], []byte(fmt.Sprint(ru.Maxrss)), 0o600); err != nil {
		fmt.Fprintln(os.Stderr, "peakrss:", err)
		os.Exit(125)
	}
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		os.Exit(128 + int(ws.Signal()))
	}
	os.Exit(cmd.ProcessState.ExitCode())
}
