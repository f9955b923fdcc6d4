package follow_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/google/go-cmp/cmp"

	"github.com/pg2dynamo/pg2dynamo/follow"
	"github.com/pg2dynamo/pg2dynamo/load"
	"github.com/pg2dynamo/pg2dynamo/tools/testenv"
)

// The situations in which a follow used to go on while the table drifted
// from PostgreSQL: each now ends with the table equal to a full load of
// the final source, or with a stop whose message names the cause and
// whose advice, followed here, brings it there.

const notesSchema = `CREATE TABLE notes (note_id int PRIMARY KEY, owner text NOT NULL, body text);
	ALTER TABLE notes REPLICA IDENTITY FULL;
	INSERT INTO notes SELECT i, 'o' || (i % 3), 'note ' || i FROM generate_series(1, 20) i`

// A followed table renamed and back, with changes in between: its changes
// are matched by the table's OID, not its name, and applied.
func TestFollowAcrossARename(t *testing.T) {
	t.Parallel()
	f := followChanges(t, filepath.Join("testdata", "notes-whole.yaml"), notesSchema,
		`ALTER TABLE notes RENAME TO notes_renamed`,
		`UPDATE notes_renamed SET owner = 'moved', body = 'moved' WHERE note_id = 1`,
		`DELETE FROM notes_renamed WHERE note_id = 2`,
		`ALTER TABLE notes_renamed RENAME TO notes`)
	if f.code != 0 {
		t.Fatalf("migrate --follow --resume: exit %d\n%s", f.code, f.out)
	}
	f.inStep(t)
}

// A followed table renamed and left so while the follow was stopped: the
// resume is refused naming the new name (a follow running then stops at
// the window that reads it: MissingTableError), and, renamed back, the
// follow goes on.
func TestFollowStopsOnARenamedTable(t *testing.T) {
	t.Parallel()
	f := followChanges(t, filepath.Join("testdata", "notes-whole.yaml"), notesSchema,
		`ALTER TABLE notes RENAME TO notes_renamed`,
		`UPDATE notes_renamed SET owner = 'moved' WHERE note_id = 1`)
	if f.code != 2 || !strings.Contains(f.out, `did you mean "notes_renamed"`) {
		t.Fatalf("migrate --follow --resume: exit %d, want 2 naming the table's new name\n%s", f.code, f.out)
	}
	testenv.Exec(t, f.url, `ALTER TABLE notes_renamed RENAME TO notes`)
	if code, out := f.resume(); code != 0 {
		t.Fatalf("after renaming back: exit %d\n%s", code, out)
	}
	f.inStep(t)
}

// A publication given with --publication that publishes inserts only is
// refused before anything is created, with the statement that fixes it;
// fixed, the follow gets updates and deletes.
func TestFollowRefusesAPartialPublication(t *testing.T) {
	t.Parallel()
	endpoint, url := ownDynalite(t), logicalDatabase(t)
	testenv.Exec(t, url, notesSchema+`; CREATE PUBLICATION p FOR TABLE notes WITH (publish = 'insert')`)
	table := testenv.TableName("notes")
	mappingFile := filepath.Join("testdata", "notes-whole.yaml")
	dir := t.TempDir()
	args := []string{"migrate", "--mapping", mappingFile, "--source", url, "--endpoint-url", endpoint, "--table", table,
		"--follow", "--until-caught-up", "--publication", "p", "--progress", "none", "--checkpoint", filepath.Join(dir, "checkpoint.json"),
		"--rejects", filepath.Join(dir, "rejects.jsonl")}
	t.Cleanup(func() {
		run(context.Background(), "drop-slot", "--mapping", mappingFile, "--source", url, "--table", table, "--publication", "p")
	})
	code, out := run(context.Background(), append(args, "--create-table")...)
	fix := `ALTER PUBLICATION p SET (publish = 'insert, update, delete, truncate')`
	if code != 2 || !strings.Contains(out, "does not publish updates, deletes, truncates") || !strings.Contains(out, fix) {
		t.Fatalf("migrate --follow --publication p: exit %d, want 2 naming what p lacks and %s\n%s", code, fix, out)
	}
	if n := len(scanTableIfAny(t, endpoint, table)); n != 0 {
		t.Errorf("the refused run wrote %d items", n)
	}
	testenv.Exec(t, url, fix)
	if code, out := run(context.Background(), append(args, "--create-table")...); code != 0 {
		t.Fatalf("after %s: exit %d\n%s", fix, code, out)
	}
	testenv.Exec(t, url, `UPDATE notes SET owner = 'moved' WHERE note_id = 1; DELETE FROM notes WHERE note_id = 2`)
	if code, out := run(context.Background(), append(args, "--resume")...); code != 0 {
		t.Fatalf("resume: exit %d\n%s", code, out)
	}
	f := followedChange{url: url, endpoint: endpoint, table: table, mapping: mappingFile}
	f.inStep(t)
}

// scanTableIfAny is scanTable, or nothing when the table does not exist.
func scanTableIfAny(t *testing.T, endpoint, table string) []string {
	t.Helper()
	c, err := load.NewClient(context.Background(), load.ClientConfig{EndpointURL: endpoint})
	if err != nil {
		t.Fatal(err)
	}
	if td, err := load.DescribeTable(context.Background(), c, table); err != nil || td == nil {
		return nil
	}
	return scanTable(t, endpoint, table)
}

// The replica identity lowered and raised again while stopped: the
// changes between were logged without the old owner, so the follow
// cannot delete their old items; it stops saying so, and the advice
// (--resume --prune) loads every item again and deletes the stale ones.
func TestFollowStopsOnALoweredReplicaIdentity(t *testing.T) {
	t.Parallel()
	f := followChanges(t, filepath.Join("testdata", "notes-whole.yaml"), notesSchema,
		`ALTER TABLE notes REPLICA IDENTITY DEFAULT`,
		`UPDATE notes SET owner = 'moved' WHERE note_id IN (1, 2)`,
		`DELETE FROM notes WHERE note_id = 3`,
		`ALTER TABLE notes REPLICA IDENTITY FULL`)
	if f.code != 1 || !strings.Contains(f.out, "the replica identity of public.notes became DEFAULT, which lacks owner") ||
		!strings.Contains(f.out, "migrate --follow --resume --prune") {
		t.Fatalf("migrate --follow --resume: exit %d, want 1 naming the lowered identity and --resume --prune\n%s", f.code, f.out)
	}
	code, out := f.resume("--prune")
	if code != 0 || !strings.Contains(out, "prune: deleted 3 stale items") {
		t.Fatalf("--resume --prune: exit %d, want 0 and the 3 old items deleted\n%s", code, out)
	}
	f.inStep(t)
}

// A TRUNCATE stops the follow (the stream does not list the rows it
// removed); the advice, --resume --prune, deletes their items.
func TestFollowStopsOnTruncate(t *testing.T) {
	t.Parallel()
	f := followChanges(t, filepath.Join("testdata", "notes-whole.yaml"), notesSchema,
		`TRUNCATE notes`, `INSERT INTO notes VALUES (100, 'new', 'after the truncate')`)
	if f.code != 1 || !strings.Contains(f.out, "a TRUNCATE emptied public.notes") || !strings.Contains(f.out, "migrate --follow --resume --prune") {
		t.Fatalf("migrate --follow --resume: exit %d, want 1 naming the TRUNCATE and --resume --prune\n%s", f.code, f.out)
	}
	if code, out := f.resume("--prune"); code != 0 {
		t.Fatalf("--resume --prune: exit %d\n%s", code, out)
	}
	f.inStep(t)
}

// A column added while the follow was stopped, to a table whose every
// column the entity takes: the follow derives every item again (the
// checkpoint records the shape the items were derived with), so unchanged
// rows get the column too.
func TestFollowAfterAddColumn(t *testing.T) {
	t.Parallel()
	f := followChanges(t, filepath.Join("testdata", "notes-whole.yaml"), notesSchema,
		`ALTER TABLE notes ADD COLUMN tag text DEFAULT 'x'`,
		`UPDATE notes SET tag = 'changed' WHERE note_id = 1`)
	if f.code != 0 || !strings.Contains(f.out, "the columns of Note changed since their items were written") {
		t.Fatalf("migrate --follow --resume: exit %d, want 0 and Note derived again\n%s", f.code, f.out)
	}
	f.inStep(t)
	// Once derived again, a resume does not derive them again.
	if code, out := f.resume(); code != 0 || strings.Contains(out, "changed since their items were written") {
		t.Errorf("a second resume: exit %d, want 0 without deriving Note again\n%s", code, out)
	}
}

// A customer whose addresses grow past the embed's max_items becomes a
// reject: its old item goes, as a full load would not write it, and the
// reject lists it.
func TestFollowDeletesTheItemsOfANewReject(t *testing.T) {
	t.Parallel()
	f := followChange(t, filepath.Join("testdata", "customers-embed.yaml"),
		`CREATE TABLE customers (customer_id int PRIMARY KEY, name text);
		CREATE TABLE addresses (address_id int PRIMARY KEY, customer_id int NOT NULL REFERENCES customers, city text);
		ALTER TABLE customers REPLICA IDENTITY FULL; ALTER TABLE addresses REPLICA IDENTITY FULL;
		INSERT INTO customers VALUES (1, 'a'), (2, 'b');
		INSERT INTO addresses VALUES (1, 1, 'x'), (2, 2, 'y')`,
		`INSERT INTO addresses VALUES (3, 1, 'z'), (4, 1, 'w')`)
	if f.code != 3 || len(f.rejects) != 1 || fmt.Sprint(f.rejects[0].SourceKey["customer_id"]) != "1" {
		t.Fatalf("migrate --follow --resume: exit %d, rejects %+v; want 3 and customer 1 rejected\n%s", f.code, f.rejects, f.out)
	}
	want := []map[string]string{{"PK": "CUSTOMER#0000000001", "SK": "CUSTOMER"}}
	if d := cmp.Diff(want, f.rejects[0].Deleted); d != "" {
		t.Errorf("the reject's deleted items (-want +got):\n%s", d)
	}
	f.inStep(t)
}

// The DynamoDB table lost under a follow (deleted, or DynamoDB Local
// restarted): a resume with --create-table would make an empty table and
// take the checkpoint's word that it is loaded; it is refused, and the
// advice (--prune) loads it again.
func TestFollowRefusesANewTableOnResume(t *testing.T) {
	t.Parallel()
	f := followChanges(t, filepath.Join("testdata", "notes-whole.yaml"), notesSchema,
		`UPDATE notes SET body = 'changed' WHERE note_id = 1`)
	if f.code != 0 {
		t.Fatalf("migrate --follow --resume: exit %d\n%s", f.code, f.out)
	}
	c, err := load.NewClient(context.Background(), load.ClientConfig{EndpointURL: f.endpoint})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.DeleteTable(context.Background(), &dynamodb.DeleteTableInput{TableName: aws.String(f.table)}); err != nil {
		t.Fatal(err)
	}
	testenv.Exec(t, f.url, `DELETE FROM notes WHERE note_id = 2`)
	code, out := f.resume("--create-table")
	if code != 2 || !strings.Contains(out, "is not the one checkpoint") || !strings.Contains(out, "migrate --follow --resume --prune") {
		t.Fatalf("--resume --create-table onto a new table: exit %d, want 2 and the way to load again\n%s", code, out)
	}
	if n := len(scanTableIfAny(t, f.endpoint, f.table)); n != 0 {
		t.Errorf("the refused run wrote %d items", n)
	}
	if code, out := f.resume("--create-table", "--prune"); code != 0 {
		t.Fatalf("--resume --create-table --prune: exit %d\n%s", code, out)
	}
	f.inStep(t)
}

// The publication dropped under a follow: the slot cannot stream past
// the drop, even once the publication is back; the follow says so, and
// the advice (drop the slot, load again with --prune) works.
func TestFollowStopsOnADroppedPublication(t *testing.T) {
	t.Parallel()
	f := followChanges(t, filepath.Join("testdata", "notes-whole.yaml"), notesSchema)
	testenv.Exec(t, f.url, `DROP PUBLICATION `+follow.DefaultName(f.table))
	testenv.Exec(t, f.url, `DELETE FROM notes WHERE note_id = 1`)
	code, out := f.resume()
	if code != 2 || !strings.Contains(out, "was dropped") || !strings.Contains(out, "pg2dynamo drop-slot") {
		t.Fatalf("resume after DROP PUBLICATION: exit %d, want 2 (nothing written) and the advice to drop the slot and load again\n%s", code, out)
	}
	f.loadAgain(t)
	f.inStep(t)
}

// The publication narrowed between runs (ALTER PUBLICATION … SET (publish
// = 'insert')), and rows updated and deleted meanwhile: the resume is
// refused before anything is written (exit 2), naming the statement that
// fixes the publication; the updates and deletes never reached the slot
// (pgoutput filters by the publication as it was), so the advice is
// --resume --prune once it is fixed, which ends in step.
func TestFollowResumeRefusesANarrowedPublication(t *testing.T) {
	t.Parallel()
	f := loaded(t, filepath.Join("testdata", "notes-whole.yaml"), notesSchema)
	pub := follow.DefaultName(f.table)
	testenv.Exec(t, f.url, `ALTER PUBLICATION `+pub+` SET (publish = 'insert')`)
	testenv.Exec(t, f.url, `UPDATE notes SET owner = 'moved' WHERE note_id = 1; DELETE FROM notes WHERE note_id = 2; INSERT INTO notes VALUES (100, 'new', 'x')`)
	before := scanTable(t, f.endpoint, f.table)
	code, out := f.resume()
	fix := `ALTER PUBLICATION ` + pub + ` SET (publish = 'insert, update, delete, truncate')`
	if code != 2 || !strings.Contains(out, "does not publish updates, deletes, truncates") || !strings.Contains(out, fix) ||
		!strings.Contains(out, "migrate --follow --resume --prune") {
		t.Fatalf("--resume: exit %d, want 2 naming %s and --resume --prune\n%s", code, fix, out)
	}
	if after := scanTable(t, f.endpoint, f.table); !slices.Equal(before, after) {
		t.Errorf("the refused resume changed the table: %d items before, %d after", len(before), len(after))
	}
	testenv.Exec(t, f.url, fix)
	if code, out := f.resume("--prune"); code != 0 {
		t.Fatalf("--resume --prune: exit %d\n%s", code, out)
	}
	f.inStep(t)
}
