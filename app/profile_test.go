package app

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// TestCPUProfileFlag: the hidden --cpuprofile flag writes a complete
// profile (gzipped protobuf) whether the command succeeds or fails.
func TestCPUProfileFlag(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		code int
	}{
		{"success", []string{"migrate", "--help"}, ExitOK},
		{"error exit", []string{"migrate"}, ExitUsage},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "cpu.prof")
			r := runCLI(t, append([]string{"--cpuprofile", path}, tc.args...)...)
			if r.code != tc.code {
				t.Fatalf("exit %d, want %d; stderr: %s", r.code, tc.code, r.stderr)
			}
			f, err := os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			zr, err := gzip.NewReader(f)
			if err != nil {
				t.Fatalf("profile is not gzip: %v", err)
			}
			b, err := io.ReadAll(zr) // fails on a truncated stream
			if err != nil {
				t.Fatalf("profile is incomplete: %v", err)
			}
			// The string table of a CPU profile names its sample types.
			if !bytes.Contains(b, []byte("nanoseconds")) || !bytes.Contains(b, []byte("cpu")) {
				t.Fatalf("not a CPU profile: %q", b)
			}
		})
	}
	if r := runCLI(t, "--cpuprofile", filepath.Join(t.TempDir(), "missing", "cpu.prof"), "plan"); r.code != ExitUsage {
		t.Fatalf("unwritable profile: exit %d, want %d", r.code, ExitUsage)
	}
}
