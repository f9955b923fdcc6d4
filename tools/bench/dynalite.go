package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/pg2dynamo/pg2dynamo/tools/testenv"
)

// dynalite is a fresh in-memory dynalite server (the one the tests use,
// started the same way as testenv.StartDynalite), kept here so that its
// CPU time can be read when it stops.
type dynalite struct {
	endpoint string
	cmd      *exec.Cmd
	exited   chan struct{} // closed once the process is reaped
	// gcs are its collections, when started with --trace-gc, each
	// stamped when the bench read its line.
	mu  sync.Mutex
	gcs []gcEvent
}

// gcEvent is one collection of V8's, from node --trace-gc: the time its
// main thread stopped for it, and for a Mark-Compact the incremental
// marking steps before it (also on the main thread, between requests).
type gcEvent struct {
	at           time.Time
	major        bool
	pause, steps time.Duration
}

// gcLine reads a --trace-gc line: "[pid:isolate] N ms: Scavenge|Mark-Compact
// [(reduce)] A (B) -> C (D) MB, PAUSE / E ms  (+ STEPS ms in K steps ...".
var gcLine = regexp.MustCompile(`ms: (Scavenge|Mark-Compact)\b.* MB, (?:pooled: [0-9.]+ MB, )?([0-9.]+) / [0-9.]+ ms(?:  \(\+ ([0-9.]+) ms in)?`)

// between returns the collections read between from and to, in order.
func (d *dynalite) between(from, to time.Time) []gcEvent {
	d.mu.Lock()
	defer d.mu.Unlock()
	var out []gcEvent
	for _, e := range d.gcs {
		if !e.at.Before(from) && !e.at.After(to) {
			out = append(out, e)
		}
	}
	return out
}

// gcStats sums the collections read between from and to: the time the
// server's one thread spent collecting, the Mark-Compacts and the longest
// single stop.
func (d *dynalite) gcStats(from, to time.Time) (spent time.Duration, majors int, longest time.Duration) {
	for _, e := range d.between(from, to) {
		spent += e.pause + e.steps
		longest = max(longest, e.pause)
		if e.major {
			majors++
		}
	}
	return spent, majors, longest
}

// majorsAt are when the Mark-Compacts read between from and to ended.
func (d *dynalite) majorsAt(from, to time.Time) []time.Time {
	var at []time.Time
	for _, e := range d.between(from, to) {
		if e.major {
			at = append(at, e.at)
		}
	}
	return at
}

// writeGC writes the collections read between from and to to path, a line
// each (when the bench read it, the kind, its stop, its incremental steps),
// to set beside the follow's log.
func (d *dynalite) writeGC(path string, from, to time.Time) error {
	var b strings.Builder
	for _, e := range d.between(from, to) {
		kind := "Scavenge"
		if e.major {
			kind = "Mark-Compact"
		}
		fmt.Fprintf(&b, "%s %s %s +%s\n", e.at.UTC().Format("15:04:05.000"), kind, e.pause, e.steps)
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

// readGC reads node's stdout: collections into d.gcs, other lines to
// stderr.
func (d *dynalite) readGC(r io.Reader) {
	sc := bufio.NewScanner(r)
	ms := func(s string) time.Duration {
		f, _ := strconv.ParseFloat(s, 64)
		return time.Duration(f * float64(time.Millisecond))
	}
	for sc.Scan() {
		m := gcLine.FindStringSubmatch(sc.Text())
		if m == nil {
			fmt.Fprintln(os.Stderr, sc.Text())
			continue
		}
		e := gcEvent{at: time.Now(), major: m[1] != "Scavenge", pause: ms(m[2])}
		if m[3] != "" {
			e.steps = ms(m[3])
		}
		d.mu.Lock()
		d.gcs = append(d.gcs, e)
		d.mu.Unlock()
	}
}

// startDynalite starts one, with nodeFlags before node's other arguments
// (a larger heap: --max-old-space-size=MB).
func startDynalite(ctx context.Context, root string, nodeFlags ...string) (*dynalite, error) {
	return startDynaliteIn(ctx, root, "", nodeFlags...)
}

// startDynaliteIn is startDynalite with its tables in a LevelDB database
// in the directory store (dynalite's --path), not in its V8 heap, when
// store is not "".
func startDynaliteIn(ctx context.Context, root, store string, nodeFlags ...string) (*dynalite, error) {
	port, err := testenv.FreePort()
	if err != nil {
		return nil, err
	}
	args, err := testenv.DynaliteArgs(root, port)
	if err != nil {
		return nil, fmt.Errorf("%w (make bench runs npm ci; or run it in %s)", err, root)
	}
	if store != "" {
		args = append(args, "--path", store)
	}
	cmd := exec.Command("node", append(nodeFlags, args...)...)
	cmd.Env = testenv.DynaliteEnv()
	d := &dynalite{endpoint: "http://127.0.0.1:" + strconv.Itoa(port), cmd: cmd, exited: make(chan struct{})}
	cmd.Stderr = os.Stderr
	var traced io.ReadCloser
	if slices.Contains(nodeFlags, "--trace-gc") {
		if traced, err = cmd.StdoutPipe(); err != nil {
			return nil, err
		}
	} else {
		cmd.Stdout = os.Stderr
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start dynalite: %w", err)
	}
	read := make(chan struct{})
	if traced != nil {
		go func() { defer close(read); d.readGC(traced) }()
	} else {
		close(read)
	}
	go func() {
		<-read // Wait closes the pipe: read it to its end first
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
