package extract

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5"

	"github.com/pg2dynamo/pg2dynamo/tools/testenv"
)

// DDL capture keeps only the last rows of its table: each DDL command
// deletes the rows before the last keep, whichever trigger (ddl_command_end
// or sql_drop) recorded it.
func TestDDLCaptureKeepsTheLastRows(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := testenv.NewDatabase(t)
	conn := testenv.Connect(t, url)
	if err := installDDLCapture(ctx, conn, "", 3); err != nil {
		t.Fatal(err)
	}
	rowsNow := func() []string {
		t.Helper()
		rows, err := conn.Query(ctx, "SELECT command || ' ' || object_identity FROM "+DDLSchema+"."+DDLTable+" ORDER BY id")
		if err != nil {
			t.Fatal(err)
		}
		got, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	for i := 1; i <= 5; i++ {
		testenv.Exec(t, url, fmt.Sprintf("CREATE TABLE t%d (id int)", i))
	}
	if d := cmp.Diff([]string{"CREATE TABLE public.t3", "CREATE TABLE public.t4", "CREATE TABLE public.t5"}, rowsNow()); d != "" {
		t.Errorf("%s.%s after five commands (-want +got):\n%s", DDLSchema, DDLTable, d)
	}
	// A DROP TABLE drops the table, its row type and that type's array.
	testenv.Exec(t, url, "DROP TABLE t1")
	if d := cmp.Diff([]string{"DROP TABLE public.t1", "DROP TABLE public.t1", "DROP TABLE public.t1[]"}, rowsNow()); d != "" {
		t.Errorf("%s.%s after a DROP TABLE (-want +got):\n%s", DDLSchema, DDLTable, d)
	}
}

// Two sessions' DDL commands do not wait on each other for the trim: while
// one runs in an open transaction (its trim holding the old rows), the
// other's command ends, without waiting on a lock, and is recorded.
func TestDDLCaptureTrimWaitsOnNoOtherSession(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := testenv.NewDatabase(t)
	if err := installDDLCapture(ctx, testenv.Connect(t, url), "", 1); err != nil {
		t.Fatal(err)
	}
	testenv.Exec(t, url, "CREATE TABLE t1 (id int); CREATE TABLE t2 (id int); CREATE TABLE t3 (id int)")
	a := testenv.Connect(t, url)
	tx, err := a.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, "CREATE TABLE ta (id int)"); err != nil {
		t.Fatal(err)
	}
	b := testenv.Connect(t, url)
	var pid int
	if err := b.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&pid); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := b.Exec(ctx, "CREATE TABLE tb (id int)")
		done <- err
	}()
	watch := testenv.Connect(t, url)
	var bErr error
	ended := false
	err = testenv.Poll("the second session's DDL to end, or to wait on a lock", 30*time.Second, (<-chan struct{})(nil), func() bool {
		select {
		case bErr = <-done:
			ended = true
			return true
		default:
		}
		var waiting bool
		if err := watch.QueryRow(ctx, "SELECT coalesce(wait_event_type = 'Lock', false) FROM pg_stat_activity WHERE pid = $1", pid).Scan(&waiting); err != nil {
			t.Fatal(err)
		}
		return waiting
	})
	if err != nil {
		t.Fatal(err)
	}
	if !ended {
		tx.Rollback(ctx) // let it go on
		<-done
		t.Fatal("the second session's CREATE TABLE waited on a lock the first session's open transaction holds")
	}
	if bErr != nil {
		t.Fatal(bErr)
	}
	var recorded bool
	if err := watch.QueryRow(ctx, "SELECT EXISTS (SELECT FROM "+DDLSchema+"."+DDLTable+" WHERE object_identity = 'public.tb')").Scan(&recorded); err != nil || !recorded {
		t.Errorf("the second session's CREATE TABLE is not recorded (%v)", err)
	}
}
