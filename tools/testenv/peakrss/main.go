// Command peakrss runs COMMAND and writes its peak RSS in kilobytes to FILE:
// peakrss FILE COMMAND [ARG...]. Go forks children with vfork, so a test's
// child inherits the test binary's ru_maxrss; this small runner's is below the
// command's. Signals pass on, the command dies with the runner, and the exit
// code is the command's (125 when the runner fails).
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
