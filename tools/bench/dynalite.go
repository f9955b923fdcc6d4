package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"time"

	"github.com/pg2dynamo/pg2dynamo/internal/testenv"
)

// dynalite is a fresh in-memory dynalite server (the one the tests use,
// started the same way as testenv.StartDynalite), kept here so that its
// CPU time can be read when it stops.
type dynalite struct {
	endpoint string
	cmd      *exec.Cmd
	exited   chan struct{} // closed once the process is reaped
}

// startDynalite starts one, with nodeFlags before node's other arguments
// (a larger heap: --max-old-space-size=MB).
func startDynalite(ctx context.Context, root string, nodeFlags ...string) (*dynalite, error) {
	port, err := testenv.FreePort()
	if err != nil {
		return nil, err
	}
	args, err := testenv.DynaliteArgs(root, port)
	if err != nil {
		return nil, fmt.Errorf("%w (make bench runs npm ci; or run it in %s)", err, root)
	}
	cmd := exec.Command("node", append(nodeFlags, args...)...)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start dynalite: %w", err)
	}
	d := &dynalite{endpoint: "http://127.0.0.1:" + strconv.Itoa(port), cmd: cmd, exited: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		close(d.exited)
	}()
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	deadline := time.After(20 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
		if err == nil {
			c.Close()
			return d, nil
		}
		select {
		case <-ctx.Done():
			d.stop()
			return nil, ctx.Err()
		case <-d.exited:
			return nil, fmt.Errorf("dynalite exited before listening: %s", cmd.ProcessState)
		case <-deadline:
			d.stop()
			return nil, fmt.Errorf("dynalite did not listen on %s within 20s", addr)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// stop kills the server and returns the CPU time it used (user + system).
func (d *dynalite) stop() time.Duration {
	_ = d.cmd.Process.Kill()
	<-d.exited
	ru, ok := d.cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
