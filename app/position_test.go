package app

import (
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/pg2dynamo/pg2dynamo/tools/testenv"
)

// A table keyed by bytea (a key type pgx reads as Go bytes) is interrupted
// part-way and resumed: the resumed run reads after the recorded position,
// nothing is lost, and verify passes. The recorded position used to be Go's
// rendering of the key ([222 173]), which PostgreSQL reads back as other
// bytes: the resumed run skipped the rows between and verify found them
// missing.
func TestResumeByteaKey(t *testing.T) {
	url := testenv.NewDatabase(t)
	// Keys spread over every first byte, below and above '[' (0x5b):
	// Knuth's multiplicative hash of 1…15000, unique. More rows than the
	// 10,000 items reading may queue ahead of the writes, so that rows are
	// left unread when the run stops, however slow its writes.
	testenv.Exec(t, url, `CREATE TABLE blobs (k bytea PRIMARY KEY, n integer NOT NULL UNIQUE, label text);
		INSERT INTO blobs SELECT decode(lpad(to_hex((i * 2654435761) % 4294967296), 8, '0'), 'hex'), i, 'b' || i
		FROM generate_series(1, 15000) i;`)
	table := testenv.TableName("blobs")
	args := migrateArgs(t, writeMapping(t, `name: blobs
table: {name: blobs}
entities:
  Blob:
    source: {table: blobs}
    pk: BLOB#${n}
    sk: BLOB
`), url, table, "--create-table", "--concurrency", "2", "--progress", "lines", "--progress-interval", "20ms")

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	started := regexp.MustCompile(`^Blob: [1-9][0-9]*/15000 rows done`)
	var out, errb syncBuffer
	errb.onLine = func(s string) {
		if started.MatchString(s) {
			cancel()
		}
	}
	if code := RunContext(ctx, args, &out, &errb); code != ExitInterrupted {
		t.Fatalf("exit %d, want %d (interrupted)\n%s%s", code, ExitInterrupted, out.String(), errb.String())
	}
	before := len(scanAll(t, dynamoClient(t), table))
	if before == 0 || before >= 15000 {
		t.Fatalf("%d items after the interruption; want a part of 15000", before)
	}

	r := runCLI(t, append(args, "--resume")...)
	if r.code != ExitOK || !strings.Contains(r.stdout, "verify PASSED") {
		t.Fatalf("resume exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if !regexp.MustCompile(`Blob \(after \[\\x[0-9a-f]{8}\]\)`).MatchString(r.stderr) {
		t.Errorf("the resumed run does not resume after a bytea position in PostgreSQL's text:\n%s", r.stderr)
	}
	if got := summaryTotal(t, r.stdout); got[0] == "15000" {
		t.Errorf("the resumed run read all 15000 rows again")
	}
	if n := len(scanAll(t, dynamoClient(t), table)); n != 15000 {
		t.Errorf("%d items in the table, want 15000", n)
	}
}
