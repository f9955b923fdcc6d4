package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Peak RSS needs a small parent. On Linux a child's ru_maxrss is at least
// its parent's peak RSS at the moment of the fork (exec records the old
// address space's high-water mark, and Go forks with CLONE_VM), so a child
// of this process, which holds the items of (b), would report gigabytes.
// measured processes are therefore started by a launcher: this binary
// again, in launcher mode, with a fresh address space of a few MB.

// launcherEnv selects launcher mode: run the command in os.Args[1:] and
// print a launchResult as JSON on stdout.
const launcherEnv = "PG2DYNAMO_BENCH_LAUNCHER"

// launcherPIDEnv, set as well, has the launcher write the child's process
// ID on stderr once it has started it, as a line pidLine and the number,
// so that the bench can sample the child while it runs (startLaunch).
const (
	launcherPIDEnv = "PG2DYNAMO_BENCH_LAUNCHER_PID"
	pidLine        = "bench launcher: pid "
)

// launchResult is what the launcher reports of the process it ran.
type launchResult struct {
	Wall        time.Duration
	User, Sys   time.Duration
	MaxRSSKB    int64
	LauncherKB  int64 // the launcher's own peak RSS when it started the child: a floor of MaxRSSKB
	ExitCode    int
	Stdout      string
	StartErr    string
	ProcessName string
}

// runLauncher is main in launcher mode.
func runLauncher(args []string) {
	res := launchResult{ProcessName: args[0], LauncherKB: selfHWM()}
	cmd := exec.Command(args[0], args[1:]...)
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = os.Stderr
	// Interrupts reach the child (which stops cleanly) through the
	// launcher, whether they were sent to the process group or to the
	// bench alone (launch's context).
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	start := time.Now()
	err := cmd.Start()
	if err == nil {
		if os.Getenv(launcherPIDEnv) != "" {
			fmt.Fprintf(os.Stderr, "%s%d\n", pidLine, cmd.Process.Pid)
		}
		go func() {
			for sig := range sigs {
				_ = cmd.Process.Signal(sig)
			}
		}()
		err = cmd.Wait()
	}
	res.Wall = time.Since(start)
	res.Stdout = out.String()
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		res.ExitCode = ee.ExitCode()
	default:
		res.StartErr = err.Error()
	}
	if cmd.ProcessState != nil {
		ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
		res.User = time.Duration(ru.Utime.Nano())
		res.Sys = time.Duration(ru.Stime.Nano())
		res.MaxRSSKB = ru.Maxrss
	}
	if err := json.NewEncoder(os.Stdout).Encode(res); err != nil {
		os.Exit(1)
	}
}

// launch runs args through the launcher and returns what it measured.
// When ctx is done, the process is interrupted (SIGINT), then killed if it
// has not stopped within a minute.
func launch(ctx context.Context, args ...string) (launchResult, error) {
	self, err := os.Executable()
	if err != nil {
		return launchResult{}, err
	}
	cmd := exec.CommandContext(ctx, self, args...)
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = time.Minute
	cmd.Env = append(os.Environ(), launcherEnv+"=1")
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return launchResult{}, fmt.Errorf("launcher: %w", err)
	}
	var res launchResult
	if err := json.Unmarshal(out, &res); err != nil {
		return launchResult{}, fmt.Errorf("launcher output: %w", err)
	}
	if res.StartErr != "" {
		return res, fmt.Errorf("start %s: %s", args[0], res.StartErr)
	}
	return res, nil
}

// selfHWM returns this process's peak RSS in KB (VmHWM), or 0.
func selfHWM() int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return n
		}
	}
	return 0
}

// launched is a process started through the launcher by startLaunch,
// still running: its stderr is read line by line as it comes.
type launched struct {
	cmd    *exec.Cmd
	stdout bytes.Buffer
	// pid is the measured process's ID (not the launcher's), or 0 if the
	// launcher did not report it.
	pid      int
	pidKnown chan struct{}
	// drained is closed once stderr reached its end (the process exited).
	drained chan struct{}
}

// startLaunch starts args through the launcher and returns once the
// launcher has reported the process's ID. Each line the process writes
// on stderr is passed to onLine, in order, from one goroutine, when it
// arrives; onLine must not block for long (the process would block on
// its writes). The process is interrupted as launch's is when ctx is done;
// call wait to reap it.
func startLaunch(ctx context.Context, onLine func(line string, at time.Time), args ...string) (*launched, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	l := &launched{pidKnown: make(chan struct{}), drained: make(chan struct{})}
	l.cmd = exec.CommandContext(ctx, self, args...)
	l.cmd.Cancel = func() error { return l.cmd.Process.Signal(os.Interrupt) }
	l.cmd.WaitDelay = time.Minute
	l.cmd.Env = append(os.Environ(), launcherEnv+"=1", launcherPIDEnv+"=1")
	l.cmd.Stdout = &l.stdout
	stderr, err := l.cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := l.cmd.Start(); err != nil {
		return nil, err
	}
	go func() {
		defer close(l.drained)
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		known := false
		for sc.Scan() {
			line := sc.Text()
			if rest, ok := strings.CutPrefix(line, pidLine); ok && !known {
				l.pid, _ = strconv.Atoi(rest)
				known = true
				close(l.pidKnown)
				continue
			}
			onLine(line, time.Now())
		}
		if !known {
			close(l.pidKnown)
		}
	}()
	select {
	case <-l.pidKnown:
	case <-ctx.Done():
	}
	if l.pid == 0 {
		_, err := l.wait()
		return nil, fmt.Errorf("start %s: the launcher reported no process ID (%v)", args[0], err)
	}
	return l, nil
}

// interrupt asks the process to stop cleanly (SIGINT, forwarded by the
// launcher).
func (l *launched) interrupt() error { return l.cmd.Process.Signal(os.Interrupt) }

// wait waits for the process to exit and returns what the launcher
// measured.
func (l *launched) wait() (launchResult, error) {
	<-l.drained
	if err := l.cmd.Wait(); err != nil {
		return launchResult{}, fmt.Errorf("launcher: %w", err)
	}
	var res launchResult
	if err := json.Unmarshal(l.stdout.Bytes(), &res); err != nil {
		return launchResult{}, fmt.Errorf("launcher output: %w", err)
	}
	if res.StartErr != "" {
		return res, fmt.Errorf("start %s: %s", res.ProcessName, res.StartErr)
	}
	return res, nil
}

// launchLogged is launch of args, measurement key's (named name): it logs
// the start, and every minute that the process is still running.
func launchLogged(ctx context.Context, key, name string, args ...string) (launchResult, error) {
	log.Printf("(%s) %s", key, name)
	stopLog := logEvery(time.Minute, func(elapsed time.Duration) { log.Printf("  (%s) running (%s)", key, elapsed.Round(time.Second)) })
	defer stopLog()
	return launch(ctx, args...)
}
