package main

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
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
}

func startDynalite(root string) (*dynalite, error) {
	cli := filepath.Join(root, "node_modules", "dynalite", "cli.js")
	if _, err := os.Stat(cli); err != nil {
		return nil, fmt.Errorf("dynalite is not installed (make bench runs npm ci; or run it in %s): %w", root, err)
	}
	port, err := testenv.FreePort()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command("node", cli, "--host", "127.0.0.1", "--port", strconv.Itoa(port),
		"--createTableMs", "0", "--deleteTableMs", "0", "--updateTableMs", "0")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start dynalite: %w", err)
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	for deadline := time.Now().Add(20 * time.Second); ; {
		c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
		if err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			return nil, fmt.Errorf("dynalite did not listen on %s within 20s", addr)
		}
		time.Sleep(50 * time.Millisecond)
	}
	return &dynalite{endpoint: "http://" + addr, cmd: cmd}, nil
}

// stop kills the server and returns the CPU time it used (user + system).
func (d *dynalite) stop() time.Duration {
	_ = d.cmd.Process.Kill()
	_ = d.cmd.Wait()
	if d.cmd.ProcessState == nil {
		return 0
	}
	ru := d.cmd.ProcessState.SysUsage().(*syscall.Rusage)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
