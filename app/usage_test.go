package app

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pg2dynamo/pg2dynamo/tools/testenv"
)

// TestFirstCommands runs what a new user types first: --version, help, a
// mistyped command and flag, and the help texts whose defaults and
// required flags must be true.
func TestFirstCommands(t *testing.T) {
	parallel(t)
	for _, tc := range []struct {
		args     []string
		code     int
		contains string
	}{
		{[]string{"--version"}, ExitOK, "pg2dynamo version "},
		{[]string{"help"}, ExitOK, "init "},
		{[]string{"help", "migrate"}, ExitOK, "--prune"},
		{[]string{"migrat"}, ExitUsage, `unknown command "migrat" (did you mean "migrate"?)`},
		{[]string{"migrate", "--max-retrie", "3"}, ExitUsage, "(did you mean --max-retries?)"},
		{[]string{"migrate", "--zzz"}, ExitUsage, "flag provided but not defined: -zzz; see"},
		{[]string{"migrate", "--help"}, ExitOK, "(default: 9, from --max-attempts 10)"},
		{[]string{"fixtures", "load", "--help"}, ExitOK, "fixtures load --domain customers|tickets|attendance|all --source URL [--scale 1]"},
	} {
		r := runCLI(t, tc.args...)
		if out := r.stdout + r.stderr; r.code != tc.code || !strings.Contains(out, tc.contains) {
			t.Errorf("pg2dynamo %s: exit %d, want %d and %q in:\n%s", strings.Join(tc.args, " "), r.code, tc.code, tc.contains, out)
		}
	}
}

// TestTableNameHints: a source table and a DynamoDB table named one
// letter off are refused with exit 2, naming the table meant.
func TestTableNameHints(t *testing.T) {
	parallel(t)
	src := testenv.NewDatabase(t)
	testenv.Exec(t, src, pruneSQL)
	dir := t.TempDir()
	good, bad := filepath.Join(dir, "good.yaml"), filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(good, []byte(pruneMapping), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bad, []byte(strings.Replace(pruneMapping, "{table: orders}", "{table: order}", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	table := testenv.TableName("hint")
	r := runCLI(t, migrateArgs(t, bad, src, table, "--create-table")...)
	if r.code != ExitUsage || !strings.Contains(r.stderr, `relation "order" does not exist`) || !strings.Contains(r.stderr, `(did you mean "orders"?)`) {
		t.Errorf("source table typo: exit %d\n%s", r.code, r.stderr)
	}
	if r := runCLI(t, migrateArgs(t, good, src, table, "--create-table")...); r.code != ExitOK {
		t.Fatalf("migrate exit %d\n%s", r.code, r.stderr)
	}
	typo := table[:len(table)-1] + "x"
	if table[len(table)-1] == 'x' {
		typo = table[:len(table)-1] + "y"
	}
	r = runCLI(t, migrateArgs(t, good, src, typo)...)
	if r.code != ExitUsage || !strings.Contains(r.stderr, `(did you mean "`+table+`"?)`) {
		t.Errorf("DynamoDB table typo %s: exit %d\n%s", typo, r.code, r.stderr)
	}
}
