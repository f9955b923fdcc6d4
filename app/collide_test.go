package app

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pg2dynamo/pg2dynamo/pipeline"
	"github.com/pg2dynamo/pg2dynamo/tools/testenv"
)

// collideMapping has two entities whose keys meet: A's row with x = 'B#7'
// and B's row with id 7 both render PK A#B#7, SK X. Neither is proven
// unique, so the run-wide duplicate check covers both.
const collideMapping = `name: collide
table: {name: collide}
entities:
  A:
    source: {table: a}
    pk: A#${x}
    sk: X
  B:
    source: {table: b}
    pk: A#B#${id:0}
    sk: X
`

// collideSQL makes A (4,000 rows) and B (1,000): B's first 100 rows
// collide with 100 of A's, at the tails of A's two halves. Neither
// entity's keys are proven unique, so the two are one collision group
// (pipeline.Run), read one after another.
var collideSQL = fmt.Sprintf(`
CREATE TABLE a (id integer PRIMARY KEY, x text NOT NULL);
INSERT INTO a SELECT i, 'a' || i FROM generate_series(1, %[1]d) i;
UPDATE a SET x = 'B#' || ((id - %[2]d) / 10) WHERE id > %[2]d AND id <= %[3]d AND id %% 10 = 0;
UPDATE a SET x = 'B#' || (50 + (id - %[4]d) / 10) WHERE id > %[4]d AND id %% 10 = 0;
CREATE TABLE b (id integer PRIMARY KEY, note text);
INSERT INTO b SELECT i, 'b' FROM generate_series(1, 1000) i;`,
	4000, 1500, 2000, 3500)

// rejectIDs lists the rejects as "entity id", sorted.
func rejectIDs(rejects []pipeline.Reject) []string {
	var out []string
	for _, r := range rejects {
		out = append(out, fmt.Sprintf("%s %v", r.Entity, r.SourceKey["id"]))
	}
	slices.Sort(out)
	return out
}

// When rows of two entities render one key, the row that keeps it is the
// earlier in mapping order of entities, then primary-key order: the same
// in every run whatever the parallel readers do, and the same in verify,
// which derives its expected items through the same pipeline. The reject
// names both rows: its own source key, and the entity of the row that kept
// the key, with the key.
func TestCollisionLoserIsDeterministic(t *testing.T) {
	parallel(t)
	url := testenv.NewDatabase(t)
	testenv.Exec(t, url, collideSQL)
	mappingFile := writeMapping(t, collideMapping)
	table := testenv.TableName("collide")

	var want []string
	for k := 1; k <= 100; k++ {
		want = append(want, fmt.Sprintf("B %d", k))
	}
	slices.Sort(want)
	// Run 0 writes to DynamoDB; the others only read and transform (the
	// decisions are all made on the read side), to keep the test short.
	// Under the race detector, which runs each of them several times
	// slower, three runs; make test runs it both ways.
	runs := 10
	if raceDetector {
		runs = 3
	}
	for run := range runs {
		extra := []string{"--sink", "null"}
		if run == 0 {
			extra = []string{"--create-table", "--no-verify"}
		}
		args := migrateArgs(t, mappingFile, url, table, extra...)
		r := runCLI(t, args...)
		if r.code != ExitRejected {
			t.Fatalf("run %d: exit %d, want %d\n%s%s", run, r.code, ExitRejected, r.stdout, r.stderr)
		}
		rejects := readRejects(t, rejectsPath(args))
		if d := cmp.Diff(want, rejectIDs(rejects)); d != "" {
			t.Errorf("run %d: rejected rows (-want +got):\n%s", run, d)
		}
		if run == 0 {
			for _, rej := range rejects {
				id := rej.SourceKey["id"]
				wantReason := fmt.Sprintf(`duplicate primary key (PK "A#B#%v", SK "X"): an earlier row of entity A keeps it`, id)
				if rej.Reason != wantReason || rej.ItemKey["PK"] != fmt.Sprintf("A#B#%v", id) {
					t.Errorf("reject %+v: want reason %q and item key A#B#%v", rej, wantReason, id)
				}
			}
		}
	}
	r := runCLI(t, "verify", "--mapping", mappingFile, "--source", url, "--endpoint-url", dynalite(t).Endpoint,
		"--table", table)
	if r.code != ExitOK || !strings.Contains(r.stdout, "verify PASSED") {
		t.Fatalf("verify exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	byKey := map[string]string{}
	for _, it := range scanAll(t, dynamoClient(t), table) {
		byKey[str(it["PK"])] = str(it["type"])
	}
	for k := 1; k <= 100; k++ {
		if pk := fmt.Sprintf("A#B#%d", k); byKey[pk] != "A" {
			t.Errorf("item %s holds %q's row; want A's, the earlier entity", pk, byKey[pk])
		}
	}
}

// A run interrupted after A's first rows are written, then resumed: B's row
// 1, read only after the resume, renders the key of A's row 1, written
// before the interruption. The resumed run still rejects it (its duplicate
// check first re-reads what the checkpoint records as written), nothing is
// overwritten, and verify passes. Rows rejected before the interruption are
// not listed again.
func TestResumeKeepsDuplicateCheck(t *testing.T) {
	url := testenv.NewDatabase(t)
	testenv.Exec(t, url, `
CREATE TABLE a (id integer PRIMARY KEY, x text);
INSERT INTO a SELECT i, 'a' || i FROM generate_series(1, 6000) i;
UPDATE a SET x = 'B#1' WHERE id = 1;
UPDATE a SET x = NULL WHERE id = 2;
CREATE TABLE b (id integer PRIMARY KEY, note text);
INSERT INTO b SELECT i, 'b' FROM generate_series(1, 50) i;`)
	mappingFile := writeMapping(t, collideMapping)
	table := testenv.TableName("collide")
	args := migrateArgs(t, mappingFile, url, table, "--create-table")
	progressArgs := append(slices.Clone(args), "--progress", "lines", "--progress-interval", "20ms", "--readers", "1")

	// Interrupted (the context cancelled, as SIGINT does) once A is under
	// way: what was read is written and the checkpoint records it.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	errOut := &syncBuffer{}
	var once sync.Once
	errOut.onLine = func(s string) {
		if strings.HasPrefix(s, "A: ") && strings.Contains(s, "rows done") && !strings.HasPrefix(s, "A: 0/") {
			once.Do(cancel)
		}
	}
	var out strings.Builder
	if code := RunContext(ctx, progressArgs, &out, errOut); code != ExitInterrupted {
		t.Fatalf("interrupted run: exit %d, want %d\n%s%s", code, ExitInterrupted, out.String(), errOut.String())
	}
	before := scanAll(t, dynamoClient(t), table)
	if len(before) == 0 || len(before) >= 6000 {
		t.Fatalf("%d items after the interruption; want a part of A", len(before))
	}
	if got := rejectIDs(readRejects(t, rejectsPath(args))); !slices.Equal(got, []string{"A 2"}) {
		t.Fatalf("%d rejects before the resume: %s; want A 2 (NULL x)", len(got), testenv.Few(got))
	}

	r := runCLI(t, append(args, "--resume")...)
	if r.code != ExitRejected || !strings.Contains(r.stdout, "verify PASSED") {
		t.Fatalf("resume: exit %d, want %d and verify PASSED\n%s%s", r.code, ExitRejected, r.stdout, r.stderr)
	}
	rejects := readRejects(t, rejectsPath(args))
	if got := rejectIDs(rejects); !slices.Equal(got, []string{"A 2", "B 1"}) {
		t.Errorf("%d rejects after the resume: %s; want A 2 once and B 1", len(got), testenv.Few(got))
	}
	want := `duplicate primary key (PK "A#B#1", SK "X"): an earlier row of entity A keeps it`
	if last := rejects[len(rejects)-1]; last.Reason != want {
		t.Errorf("B 1 rejected for %q, want %q", last.Reason, want)
	}
	for _, it := range scanAll(t, dynamoClient(t), table) {
		if str(it["PK"]) == "A#B#1" && (str(it["type"]) != "A" || str(it["x"]) != "B#1") {
			t.Errorf("item A#B#1 = %v, want A's row 1, written before the interruption", testenv.CanonicalItem(it))
		}
	}
}
