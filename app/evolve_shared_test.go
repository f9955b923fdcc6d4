package app

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pg2dynamo/pg2dynamo/fixtures"
	"github.com/pg2dynamo/pg2dynamo/tools/testenv"
)

// sharedV1 is a mapping of the tickets fixture whose Org and User items
// share the type Account; sharedV2 changes User only (email, excluded
// before, added); collideV2 is sharedV2 with an entity added whose keys
// are Ticket's (an entity the comparison of TicketCopy does not read).
const sharedV1 = `
name: tickets-shared
table:
  name: tickets
entities:
  Org:
    source: {table: orgs}
    type: Account
    pk: ORG#${org_id}
    sk: ORG#${org_id}
  User:
    source: {table: users}
    type: Account
    pk: ORG#${org_id}
    sk: USER#${user_id}
    attributes: {exclude: [email]}
  Ticket:
    source: {table: tickets}
    pk: USER#${user_id}
    sk: TICKET#${ticket_id}
`

var (
	sharedV2  = strings.Replace(sharedV1, "    attributes: {exclude: [email]}\n", "", 1)
	collideV2 = sharedV2 + `  TicketCopy:
    source: {table: tickets}
    pk: USER#${user_id}
    sk: TICKET#${ticket_id}
`
)

// A new version that changes User, whose type Account Org shares, compares
// Org's items too: none of them is written or deleted (the items of a
// type are compared whole: Org's, left out, would be stale), exactly the
// User items are put, and the table equals a fresh migration with v2.
// Then a version adding an entity whose keys are Ticket's, a type the
// comparison does not read, overwrites no Ticket item: each collision is
// a reject, as migrate's duplicate key, and the run fails.
func TestEvolveSharedType(t *testing.T) {
	parallel(t)
	src := testenv.NewDatabase(t)
	if _, err := fixtures.Load(context.Background(), testenv.Connect(t, src), "tickets", 0.01, 1); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	v1, v2, v3 := filepath.Join(dir, "v1.yaml"), filepath.Join(dir, "v2.yaml"), filepath.Join(dir, "v3.yaml")
	testenv.WriteFile(t, v1, sharedV1, 0o644)
	testenv.WriteFile(t, v2, sharedV2, 0o644)
	testenv.WriteFile(t, v3, collideV2, 0o644)
	table := testenv.TableName("evolve-shared")
	if r := runCLI(t, migrateArgs(t, v1, src, table, "--create-table", "--no-verify")...); r.code != ExitOK {
		t.Fatalf("migrate v1: exit %d\n%s", r.code, r.stderr)
	}
	before := dumpByKey(t, table)
	rec := testenv.NewWriteRecorder(t, dynalite(t).Endpoint, "PK", "SK")
	r := runCLI(t, withEndpoint(migrateArgs(t, v2, src, table, "--changes-only", "--previous-mapping", v1), rec.URL)...)
	if r.code != ExitOK {
		t.Fatalf("migrate --changes-only --previous-mapping v1 with v2: exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	after := dumpByKey(t, table)
	if d := cmp.Diff(freshV2(t, src, v2), after); d != "" {
		t.Fatalf("the evolved table is not what a fresh migration with v2 writes (-fresh +evolved):\n%s", d)
	}
	wantPuts, wantDeletes := changedKeys(before, after)
	if len(wantPuts) == 0 || len(wantDeletes) != 0 {
		t.Fatalf("%d items changed and %d gone; want every User item changed, none gone", len(wantPuts), len(wantDeletes))
	}
	for _, k := range wantPuts {
		if !strings.Contains(k, " USER#") {
			t.Errorf("item %s changed: only User's should", k)
		}
	}
	if d := cmp.Diff(wantPuts, rec.Puts()); d != "" {
		t.Errorf("items put (-changed +put):\n%s", d)
	}
	if d := rec.Deletes(); len(d) > 0 {
		t.Errorf("items deleted: %v; want none (Org's items share User's type)", d)
	}

	rejects := filepath.Join(dir, "rejects.jsonl")
	rec.Reset()
	r = runCLI(t, "migrate", "--mapping", v3, "--previous-mapping", v2, "--changes-only", "--source", src, "--endpoint-url", rec.URL,
		"--table", table, "--progress", "none", "--rejects", rejects, "--checkpoint", filepath.Join(dir, "cp.json"))
	if r.code != ExitMismatch {
		t.Fatalf("a version whose new entity's keys are Ticket's: exit %d, want %d (its items do not read back as put)\nstdout:\n%s\nstderr:\n%s", r.code, ExitMismatch, r.stdout, r.stderr)
	}
	if d := cmp.Diff(after, dumpByKey(t, table)); d != "" {
		t.Errorf("the colliding version changed the table (-before +after):\n%s", d)
	}
	rejected := readRejects(t, rejects)
	tickets := 0
	for k := range after {
		if strings.Contains(k, " TICKET#") {
			tickets++
		}
	}
	if len(rejected) != tickets || tickets == 0 {
		t.Fatalf("%d rejects, want one for each of the %d Ticket items TicketCopy's keys collide with\nstderr:\n%s", len(rejected), tickets, r.stderr)
	}
	// dynalite returns no item with a failed condition: the reason names
	// no type (engine's TestTableApplierGuarded checks it does).
	if rj := rejected[0]; rj.Entity != "TicketCopy" || !strings.Contains(rj.Reason, "duplicate primary key") || !strings.Contains(rj.Reason, "not overwritten") {
		t.Errorf("reject %+v: want TicketCopy's, a duplicate primary key not overwritten", rj)
	}
}
