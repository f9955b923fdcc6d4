package app

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/creack/pty"

	"github.com/pg2dynamo/pg2dynamo/pipeline"
	"github.com/pg2dynamo/pg2dynamo/progress"
	"github.com/pg2dynamo/pg2dynamo/tools/testenv"
)

// fakeClock is a clock the test moves (and mpb's goroutine reads).
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func newFakeClock() *fakeClock { return &fakeClock{t: time.Date(2026, 11, 24, 0, 0, 0, 0, time.UTC)} }

func (c *fakeClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

var ansiEscape = regexp.MustCompile("\x1b\\[[0-9;?]*[A-Za-z]")

// lastFrame is the last frame mpb drew in out (each begins by clearing
// the last, "ESC[J"), without escapes and carriage returns, by line.
func lastFrame(out string) []string {
	if i := strings.LastIndex(out, "\x1b[J"); i >= 0 {
		out = out[i:]
	}
	out = strings.ReplaceAll(ansiEscape.ReplaceAllString(out, ""), "\r", "")
	return strings.FieldsFunc(out, func(r rune) bool { return r == '\n' })
}

// openPTY opens a pseudo-terminal of cols columns and 24 rows, and
// copies what is written to its terminal side into the returned buffer.
func openPTY(t *testing.T, cols uint16) (*os.File, *syncBuffer) {
	t.Helper()
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Skipf("no pseudo-terminal here: %v", err)
	}
	if err := pty.Setsize(tty, &pty.Winsize{Rows: 24, Cols: cols}); err != nil {
		t.Fatal(err)
	}
	out := &syncBuffer{}
	copied := make(chan struct{})
	go func() { defer close(copied); io.Copy(out, ptmx) }()
	t.Cleanup(func() { tty.Close(); ptmx.Close(); <-copied })
	return tty, out
}

// waitFor waits up to eventWait for a frame in out whose lines contain
// every one of want, in order, and returns it.
func waitFor(t *testing.T, out *syncBuffer, want ...string) []string {
	t.Helper()
	var frame []string
	err := testenv.Poll[struct{}](fmt.Sprintf("a frame with %q", want), eventWait, nil, func() bool {
		frame = lastFrame(out.String())
		next := 0
		for _, line := range frame {
			if next < len(want) && strings.Contains(line, want[next]) {
				next++
			}
		}
		return next == len(want)
	})
	if err != nil {
		t.Fatalf("%v; the last:\n%s", err, strings.Join(frame, "\n"))
	}
	return frame
}

// The bars, drawn in a pseudo-terminal on a clock the test moves: the
// overall bar shows the rows of every entity, the items/s and the time
// elapsed since the run was planned and the ETA at that rate; entity bars
// follow in the mapping's order, one length, a finished one keeping the
// average rate it finished at, one not yet read waiting, an empty one
// empty.
func TestProgressBarsShowElapsedAndETA(t *testing.T) {
	tty, out := openPTY(t, 120)
	clock := newFakeClock()
	b := progress.NewBars(tty, clock.now)
	b.Refresh = 10 * time.Millisecond
	b.Plan([]pipeline.PlannedEntity{{Name: "Org", Rows: 200}, {Name: "Ticket", Rows: 700}, {Name: "Label", Rows: 100}, {Name: "Tag", Rows: 0}})
	b.Start("Org")
	clock.add(10 * time.Second)
	b.Advance("Org", 200, 400) // done in 10 s: 40 items/s
	b.Start("Ticket")
	clock.add(15 * time.Second)
	b.Advance("Ticket", 50, 50)
	// 250 of 1000 rows in 25 s: 750 more take 75 s; 450 items in 25 s.
	waitFor(t, out, "ETA  1m15s", "Org", "Ticket", "Label", "Tag")
	clock.add(5 * time.Minute) // later frames: Org keeps its rate
	// Each bar reads the clock as it is drawn, so a frame drawn across
	// the step can show the old time on some lines: wait for one showing
	// the new time on both the total and the bar still reading.
	frame := waitFor(t, out, "elapsed  5m25s", "reading  5m15s")
	want := []*regexp.Regexp{
		regexp.MustCompile(`^total   250/1000 rows \[.*\]  25%      1 items/s  elapsed  5m25s  ETA 16m15s$`),
		regexp.MustCompile(`^Org     200/200  rows \[.*\] 100%     40 items/s  done in    10s +$`),
		regexp.MustCompile(`^Ticket   50/700  rows \[.*\]   7%      0 items/s  reading  5m15s +$`),
		regexp.MustCompile(`^Label     0/100  rows \[.*\]   0%      - items/s  waiting +$`),
		regexp.MustCompile(`^Tag       0/0    rows \[.*\] 100%      - items/s  empty +$`),
	}
	if len(frame) != len(want) {
		t.Fatalf("frame of %d lines, want %d:\n%s", len(frame), len(want), strings.Join(frame, "\n"))
	}
	for i, re := range want {
		if !re.MatchString(frame[i]) {
			t.Errorf("line %d:\n%s\nwant %s", i, frame[i], re)
		}
		if len(frame[i]) != len(frame[0]) {
			t.Errorf("line %d is %d long, the first %d: columns move", i, len(frame[i]), len(frame[0]))
		}
	}
	b.Close()
}

// On a terminal of 80 columns the bars drop columns rather than their
// bar: every line of every frame fits (a longer line wraps, and the next
// frame, drawn one line short over it, leaves copies of it on the
// screen), each bar keeps room to move, and the closing frame is drawn
// once.
func TestProgressBarsFitEightyColumns(t *testing.T) {
	tty, out := openPTY(t, 80)
	clock := newFakeClock()
	b := progress.NewBars(tty, clock.now)
	b.Refresh = 10 * time.Millisecond
	b.Plan([]pipeline.PlannedEntity{{Name: "OrderDetailArchive", Rows: 2_000_000}, {Name: "Ticket", Rows: 700_000}})
	b.Writers(12)
	b.Start("OrderDetailArchive")
	clock.add(90 * time.Second)
	b.Advance("OrderDetailArchive", 2_000_000, 2_000_000)
	b.Start("Ticket")
	clock.add(30 * time.Second)
	b.Advance("Ticket", 350_000, 350_000)
	waitFor(t, out, "ETA    18s", "OrderDetailArchive", "Ticket")
	b.Close()
	frame := waitFor(t, out, "total", "done in  1m30s", "reading")
	bar := regexp.MustCompile(`\[[^\]]{10,}\]`)
	for _, line := range frame {
		if !bar.MatchString(line) {
			t.Errorf("line %q: its bar has less than 10 columns", line)
		}
	}
	if len(frame) != 3 {
		t.Errorf("closing frame of %d lines, want 3 (drawn once):\n%s", len(frame), strings.Join(frame, "\n"))
	}
	drawn := strings.ReplaceAll(ansiEscape.ReplaceAllString(out.String(), ""), "\r", "")
	for _, line := range strings.Split(drawn, "\n") {
		if n := utf8.RuneCountInString(line); n > 80 {
			t.Errorf("a line of %d columns on a terminal of 80:\n%s", n, line)
		}
	}
}

// migrate on a terminal draws bars of its own accord (--progress auto),
// and its last frame accounts for every row of the source. verify and
// plan --with-source show the reading too, here in lines: verify its
// derivation then its Scan, plan its derivation; and so do migrate
// --prune and --changes-only, whose comparisons read the source and the
// table, and export.
func TestProgressOfEveryLongPhase(t *testing.T) {
	parallel(t)
	mappingFile := testenv.RepoFile(t, "fixtures", "mappings", "tickets.yaml")
	url, counts := fixtureSource(t, "tickets", 0.2) // shared with other tests
	table := testenv.TableName("bars")
	args := migrateArgs(t, mappingFile, url, table, "--create-table", "--no-verify")
	args[slices.Index(args, "--progress")+1] = "auto"
	tty, out := openPTY(t, 120)
	var stdout bytes.Buffer
	if code := RunContext(context.Background(), args, &stdout, tty); code != 0 {
		t.Fatalf("exit %d\n%s%s", code, stdout.String(), out.String())
	}
	total := strconv.FormatInt(counts["orgs"]+counts["users"]+counts["tickets"], 10)
	frame := waitFor(t, out, "total", "Org", "User", "Ticket")
	// --concurrency auto (the default): the overall bar shows the writers.
	head := regexp.MustCompile(`^total +([0-9]+)/([0-9]+) rows .* 100% +[0-9]+ items/s +[0-9]+ writers?  elapsed +[0-9]+s  ETA +0s$`).FindStringSubmatch(frame[0])
	if head == nil || head[1] != total || head[2] != total {
		t.Errorf("overall bar %q: want %s/%s rows, 100%%, the writers, elapsed and ETA 0s", frame[0], total, total)
	}

	lines := []string{"--progress", "lines", "--progress-interval", "1h"}
	derived := "total: " + total + "/" + total + " rows done (100%)"
	v := runCLI(t, append([]string{"verify", "--mapping", mappingFile, "--source", url, "--endpoint-url", dynalite(t).Endpoint, "--table", table}, lines...)...)
	scanned := "Scan of " + table + ": " + total + "/" + total + " items done in "
	if v.code != 0 || !strings.Contains(v.stderr, derived) || !strings.Contains(v.stderr, scanned) {
		t.Errorf("verify: exit %d, want 0 and the lines %q and %q in:\n%s", v.code, derived, scanned, v.stderr)
	}
	p := runCLI(t, append([]string{"plan", "--mapping", mappingFile, "--source", url, "--with-source"}, lines...)...)
	if p.code != 0 || !strings.Contains(p.stderr, derived) {
		t.Errorf("plan --with-source: exit %d, want 0 and the line %q in:\n%s", p.code, derived, p.stderr)
	}
	// The comparisons of --prune and --changes-only, and export, show the
	// same lines: the source's rows, then the Scan.
	for _, extra := range [][]string{{"--prune"}, {"--changes-only", "--no-verify"}} {
		args := migrateArgs(t, mappingFile, url, table, extra...)
		args = append(args[:slices.Index(args, "--progress")], args[slices.Index(args, "--progress")+2:]...)
		r := runCLI(t, append(args, lines...)...)
		if r.code != 0 || strings.Count(r.stderr, derived) < 1 || !strings.Contains(r.stderr, scanned) {
			t.Errorf("migrate %s: exit %d, want 0 and the lines %q and %q in:\n%s", extra[0], r.code, derived, scanned, r.stderr)
		}
	}
	e := runCLI(t, append([]string{"export", "--mapping", mappingFile, "--source", url, "--to", "file://" + t.TempDir() + "/",
		"--rejects", filepath.Join(t.TempDir(), "rejects.jsonl")}, lines...)...)
	if e.code != 0 || !strings.Contains(e.stderr, derived) {
		t.Errorf("export: exit %d, want 0 and the line %q in:\n%s", e.code, derived, e.stderr)
	}
}

// A real pg2dynamo process drawing --progress bars (here on a pipe: the
// flag asks for them without a terminal) and stopped with SIGINT part-way
// exits with 130 after printing its summary, as with --progress lines.
// (Its bars never reached their totals, and mpb's Wait waited for them
// forever.)
func TestSIGINTWithProgressBars(t *testing.T) {
	parallel(t)
	bin := buildBinary(t)
	url, _ := fixtureSource(t, "tickets", 1)
	cmd := exec.Command(bin, migrateArgs(t, testenv.RepoFile(t, "fixtures", "mappings", "tickets.yaml"), url, testenv.TableName("tickets"),
		"--create-table", "--no-verify", "--progress", "bars")...)
	var out bytes.Buffer
	errOut := &syncBuffer{}
	started := make(chan struct{})
	// A frame of the Ticket bar with rows done: "Ticket 1234 / 20000 ...".
	moving := regexp.MustCompile(`Ticket\s+[1-9][0-9]* ?/ ?[0-9]+`)
	var once bool
	errOut.onLine = func(s string) {
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
	case <-time.After(eventWait):
		cmd.Process.Kill()
		t.Fatalf("waiting for the Ticket bar to move: not in %s\n%s", eventWait, errOut.String())
	}
	stopProcess(t, cmd, syscall.SIGINT, 130, &out, errOut)
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
