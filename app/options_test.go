package app

import (
	"strings"
	"testing"
)

// Each bounded flag refuses a value out of its range with a usage error
// (exit 2) naming the flag, the value and the range, before anything is
// opened: here, before the mapping file, which does not exist, is read.
func TestFlagRanges(t *testing.T) {
	for _, tc := range []struct {
		args []string
		says string
	}{
		{[]string{"migrate", "--readers", "0"}, "--readers 0: expected 1 to 64"},
		{[]string{"migrate", "--max-write-units", "-1"}, "--max-write-units -1: expected a positive number (0: no cap)"},
		{[]string{"migrate", "--max-attempts", "0"}, "--max-attempts 0: expected at least 1"},
		{[]string{"migrate", "--max-retries", "-1"}, "--max-retries -1: expected 0 or more"},
		{[]string{"migrate", "--retry-deadline", "0s"}, "--retry-deadline 0s: expected a positive duration"},
		{[]string{"migrate", "--dry-run", "--segments", "65"}, "--segments 65: expected 1 to 64"},
		{[]string{"verify", "--sample", "0"}, "--sample 0: expected at least 1"},
		{[]string{"verify", "--format", "yaml"}, "--format yaml: expected text, markdown or json"},
		{[]string{"diff", "--progress-interval", "-1s"}, "--progress-interval -1s: expected a positive duration"},
		{[]string{"export", "--to", "file:///tmp/x/", "--objects", "257"}, "--objects 257: expected 1 to 256"},
		{[]string{"export", "--to", "file:///tmp/x/", "--object-size", "1000"}, "--object-size 1000: expected 1 MiB (1048576) to 4 TiB (4398046511104)"},
		{[]string{"export", "--to", "file:///tmp/x/", "--object-size", "6597069766656"}, "--object-size 6597069766656: expected 1 MiB (1048576) to 4 TiB (4398046511104): an S3 object holds at most 5 TiB"},
		{[]string{"import", "--from", "s3://b/p/", "--segments", "0"}, "--segments 0: expected 1 to 64"},
		{[]string{"migrate", "--follow", "--audit", "fix"}, "--audit fix: expected off, report or repair"},
		{[]string{"migrate", "--follow", "--audit-cycle", "0s"}, "--audit-cycle 0s: expected a positive duration"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			r := runCLI(t, append(tc.args, "--mapping", "nowhere.yaml")...)
			if r.code != ExitUsage || !strings.Contains(r.stderr, tc.says) {
				t.Errorf("exit %d, want %d saying %q\n%s", r.code, ExitUsage, tc.says, r.stderr)
			}
		})
	}
}
