package follow_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/pg2dynamo/pg2dynamo/extract"
	"github.com/pg2dynamo/pg2dynamo/follow"
	"github.com/pg2dynamo/pg2dynamo/tools/testenv"
)

// DDL capture records each DDL command and the object it touched, and,
// for a command on a publication, the publication's state just after it;
// a DDL command of a role that may not write the record still runs; and
// DropDDLCapture removes it all.
func TestDDLCaptureRecordsCommands(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := logicalDatabase(t)
	conn := testenv.Connect(t, url)
	if err := extract.InstallDDLCapture(ctx, conn, ""); err != nil {
		t.Fatal(err)
	}
	testenv.Exec(t, url, `CREATE TYPE s AS ENUM ('a', 'b');
		CREATE TABLE t (id int PRIMARY KEY, v s);
		CREATE PUBLICATION p FOR TABLE t;
		ALTER PUBLICATION p SET (publish = 'insert');
		ALTER TYPE s RENAME VALUE 'a' TO 'z';
		CREATE ROLE pg2dynamo_ddl_test_user LOGIN;
		GRANT CREATE ON SCHEMA public TO pg2dynamo_ddl_test_user`)
	t.Cleanup(func() {
		testenv.Exec(t, url, `DROP OWNED BY pg2dynamo_ddl_test_user; DROP ROLE pg2dynamo_ddl_test_user`)
	})
	as := testenv.Connect(t, url)
	if _, err := as.Exec(ctx, `SET ROLE pg2dynamo_ddl_test_user; CREATE TABLE mine (x int); RESET ROLE`); err != nil {
		t.Fatalf("a DDL command of a role without rights on %s: %v", follow.DDLSchema, err)
	}
	rows, err := conn.Query(ctx, `SELECT command, coalesce(object_type, ''), coalesce(object_identity, ''), coalesce(publications -> 'p' ->> 'update', '') FROM pg2dynamo.ddl_events ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	got, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) ([4]string, error) {
		var v [4]string
		err := r.Scan(&v[0], &v[1], &v[2], &v[3])
		return v, err
	})
	if err != nil {
		t.Fatal(err)
	}
	want := map[[4]string]bool{
		{"ALTER PUBLICATION", "publication", "p", "false"}: false,
		{"ALTER TYPE", "type", "public.s", ""}:             false,
		{"CREATE TABLE", "table", "public.mine", ""}:       false,
	}
	for _, r := range got {
		if _, ok := want[r]; ok {
			want[r] = true
		}
	}
	for r, seen := range want {
		if !seen {
			t.Errorf("no record %q among %q", r, got)
		}
	}
	dropped, kept, err := extract.DropDDLCapture(ctx, conn, "")
	if err != nil || len(dropped) != 1 || len(kept) != 0 {
		t.Fatalf("DropDDLCapture: %q, kept for %q, %v", dropped, kept, err)
	}
	if ok, err := extract.DDLCaptureInstalled(ctx, conn); ok || err != nil {
		t.Errorf("installed after DropDDLCapture: %v, %v", ok, err)
	}
}

// DropDDLCapture keeps DDL capture while a slot a follow streamed it with
// exists, whatever that slot's name (a follow's --slot), naming it; with
// that slot gone, it drops it.
func TestDropDDLCaptureKeepsItForANamedSlot(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := logicalDatabase(t)
	conn := testenv.Connect(t, url)
	slot := strings.ReplaceAll(testenv.TableName("orders_follow"), "-", "_")
	if err := extract.InstallDDLCapture(ctx, conn, slot); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, "SELECT pg_create_logical_replication_slot($1, 'pgoutput')", slot); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		conn.Exec(context.WithoutCancel(ctx), "SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = $1", slot)
	})
	dropped, kept, err := extract.DropDDLCapture(ctx, conn, "pg2dynamo_other")
	if err != nil || len(dropped) != 0 || !slices.Equal(kept, []string{slot}) {
		t.Fatalf("DropDDLCapture with slot %s streaming it: dropped %q, kept for %q, %v", slot, dropped, kept, err)
	}
	if _, err := conn.Exec(ctx, "SELECT pg_drop_replication_slot($1)", slot); err != nil {
		t.Fatal(err)
	}
	dropped, kept, err = extract.DropDDLCapture(ctx, conn, slot)
	if err != nil || len(dropped) != 1 || len(kept) != 0 {
		t.Fatalf("DropDDLCapture with slot %s gone: dropped %q, kept for %q, %v", slot, dropped, kept, err)
	}
}
