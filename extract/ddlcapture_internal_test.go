package extract

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5"

	"github.com/pg2dynamo/pg2dynamo/internal/testenv"
)

// DDL capture keeps only the last rows of its table: each DDL command
// deletes the rows before the last keep, whichever trigger (ddl_command_end
// or sql_drop) recorded it.
func TestDDLCaptureKeepsTheLastRows(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := testenv.NewDatabase(t)
	conn := testenv.Connect(t, url)
	if err := installDDLCapture(ctx, conn, 3); err != nil {
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
