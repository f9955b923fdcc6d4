package testenv

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

var (
	peakOnce sync.Once
	peakBin  string
	peakErr  error
)

// PeakRSS is a command's peak resident set size via the peakrss runner, which
// sees the command's own peak (a test's child's ru_maxrss starts at the test
// binary's).
type PeakRSS struct{ file string }

// WithPeakRSS returns a command running name under the peakrss runner (built
// once per test binary) and the PeakRSS to read after it ends. Signals reach
// name; the exit code is name's.
func WithPeakRSS(t testing.TB, name string, args ...string) (*exec.Cmd, PeakRSS) {
	t.Helper()
	peakOnce.Do(func() {
		var root, dir string
		if root, peakErr = RepoRoot(); peakErr != nil {
			return
		}
		if dir, peakErr = os.MkdirTemp("", "peakrss"); peakErr != nil {
			return
		}
		peakBin = filepath.Join(dir, "peakrss")
		cmd := exec.Command("go", "-C", "tools", "build", "-o", peakBin, "./testenv/peakrss")
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			peakErr = fmt.Errorf("go build peakrss: %v\n%s", err, out)
		}
	})
	if peakErr != nil {
		t.Fatal(peakErr)
	}
	file := filepath.Join(t.TempDir(), "peak-rss")
	return exec.Command(peakBin, append([]string{file, name}, args...)...), PeakRSS{file}
}

// MB returns the peak in megabytes (2^20 bytes), after the command ended.
func (p PeakRSS) MB(t testing.TB) float64 {
	t.Helper()
	data, err := os.ReadFile(p.file)
	if err != nil {
		t.Fatalf("peak RSS: %v", err)
	}
	var kb int64
	if _, err := fmt.Sscan(strings.TrimSpace(string(data)), &kb); err != nil {
		t.Fatalf("peak RSS %q: %v", data, err)
	}
	return float64(kb) / 1024
}
