package app

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pg2dynamo/pg2dynamo/tools/testenv"
)

// countRows returns SELECT count(*) of each table.
func countRows(t *testing.T, url string, tables map[string]string) map[string]int64 {
	t.Helper()
	conn := testenv.Connect(t, url)
	out := map[string]int64{}
	for typ, table := range tables {
		var n int64
		if err := conn.QueryRow(context.Background(), "SELECT count(*) FROM "+table).Scan(&n); err != nil {
			t.Fatal(err)
		}
		out[typ] = n
	}
	return out
}

// checkPartition queries one item collection by partition key and sort-key
// prefix and asserts it holds exactly the rows psql lists for query, in
// the same order, with equal values.
func checkPartition(t *testing.T, table, pk, skPrefix, url, query string) {
	t.Helper()
	items := queryAll(t, dynamoClient(t), keyCond(t, table, pk, skPrefix))
	rows := psqlJSON(t, url, query)
	if len(rows) == 0 {
		t.Fatalf("reference query returned no rows: %s", query)
	}
	if len(items) != len(rows) {
		t.Fatalf("Query %s begins_with %s: %d items, psql lists %d rows", pk, skPrefix, len(items), len(rows))
	}
	for i := range rows {
		if d := sameAsRow(rows[i], items[i]); len(d) > 0 {
			t.Errorf("%s item %d (SK %s) differs from row %d:\n%v", pk, i, str(items[i]["SK"]), i, d)
		}
	}
}

func TestMigrateNorthwind(t *testing.T) {
	parallel(t)
	url := testenv.NewDatabase(t)
	psqlFile(t, url, testenv.RepoFile(t, "examples", "northwind", "northwind.sql"))
	table := testenv.TableName("northwind")
	args := migrateArgs(t, testenv.RepoFile(t, "examples", "northwind", "mapping.yaml"), url, table, "--create-table")

	r := runCLI(t, args...)
	if r.code != ExitOK {
		t.Fatalf("migrate exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	c := dynamoClient(t)
	first := scanAll(t, c, table)
	want := countRows(t, url, map[string]string{
		"Customer": "customers", "Order": "orders", "OrderDetail": "order_details", "Product": "products",
		"Category": "categories", "Supplier": "suppliers", "Employee": "employees", "Shipper": "shippers",
	})
	if d := cmp.Diff(want, countByType(first)); d != "" {
		t.Errorf("items per type differ from rows per table (-want +got):\n%s", d)
	}

	for _, cust := range []string{"ALFKI", "SAVEA"} {
		checkPartition(t, table, "CUSTOMER#"+cust, "ORDER#", url,
			fmt.Sprintf("SELECT row_to_json(o) FROM orders o WHERE customer_id = '%s' ORDER BY order_id", cust))
	}
	checkPartition(t, table, "ORDER#10248", "PRODUCT#", url,
		"SELECT row_to_json(d) FROM order_details d WHERE order_id = 10248 ORDER BY product_id")

	// A second run over the same data leaves an identical table.
	r = runCLI(t, args...)
	if r.code != ExitOK {
		t.Fatalf("second migrate exit %d\nstderr:\n%s", r.code, r.stderr)
	}
	if d := cmp.Diff(testenv.CanonicalItems(first), testenv.CanonicalItems(scanAll(t, c, table))); d != "" {
		t.Errorf("second run changed the table (-first +second):\n%s", d)
	}
}

func TestMigrateFixtures(t *testing.T) {
	t.Parallel()
	cases := []struct {
		domain       string
		types        map[string]string
		pk, skPrefix string
		query        string
	}{
		{
			domain: "customers",
			types:  map[string]string{"Customer": "customers", "Address": "addresses"},
			pk:     "CUSTOMER#0000000000000000007", skPrefix: "ADDRESS#",
			query: "SELECT row_to_json(a) FROM addresses a WHERE customer_id = 7 ORDER BY address_id",
		},
		{
			domain: "tickets",
			types:  map[string]string{"Org": "orgs", "User": "users", "Ticket": "tickets"},
			pk:     "USER#0000000000000000021", skPrefix: "TICKET#",
			query: "SELECT row_to_json(t) FROM tickets t WHERE user_id = 21 ORDER BY ticket_id",
		},
		{
			domain: "attendance",
			types:  map[string]string{"Student": "students", "Lecture": "lectures", "Attendance": "attendance"},
			pk:     "STUDENT#0000000003", skPrefix: "LECTURE#",
			query: "SELECT row_to_json(a) FROM attendance a WHERE student_id = 3 ORDER BY lecture_id",
		},
	}
	for _, tc := range cases {
		t.Run(tc.domain, func(t *testing.T) {
			parallel(t)
			url, _ := fixtureSource(t, tc.domain, 0.5)
			table := testenv.TableName(tc.domain)
			r := runCLI(t, migrateArgs(t, testenv.RepoFile(t, "fixtures", "mappings", tc.domain+".yaml"), url, table, "--create-table")...)
			if r.code != ExitOK {
				t.Fatalf("migrate exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
			}
			items := scanAll(t, dynamoClient(t), table)
			if d := cmp.Diff(countRows(t, url, tc.types), countByType(items)); d != "" {
				t.Errorf("items per type differ from rows per table (-want +got):\n%s", d)
			}
			checkPartition(t, table, tc.pk, tc.skPrefix, url, tc.query)
		})
	}
}

// Cancelling the run (what SIGINT and SIGTERM do) stops it with exit code
// 130 and a summary of what was written before the stop.
func TestMigrateInterrupted(t *testing.T) {
	url, _ := fixtureSource(t, "tickets", 1)
	table := testenv.TableName("tickets")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// Cancel as soon as the first Ticket rows are done.
	args := migrateArgs(t, testenv.RepoFile(t, "fixtures", "mappings", "tickets.yaml"), url, table, "--create-table",
		"--progress", "lines", "--progress-interval", "20ms")
	var out, errb syncBuffer
	errb.onLine = func(s string) {
		if strings.HasPrefix(s, "Ticket: ") && strings.Contains(s, "rows done") {
			cancel()
		}
	}
	code := RunContext(ctx, args, &out, &errb)
	if code != ExitInterrupted {
		t.Fatalf("exit %d, want %d\n%s%s", code, ExitInterrupted, out.String(), errb.String())
	}
	if !strings.Contains(errb.String(), "pg2dynamo: interrupted") {
		t.Errorf("stderr does not say the run was interrupted:\n%s", errb.String())
	}
	if !strings.Contains(out.String(), "Ticket") {
		t.Errorf("no summary after the interruption:\n%s", out.String())
	}
	// The batches already read are written before the run ends, so the
	// summary's count is exactly what the table holds.
	n := len(scanAll(t, dynamoClient(t), table))
	if n == 0 || n >= 22020 {
		t.Errorf("%d items written, want some but not all 22020", n)
	}
	if got := summaryTotal(t, out.String()); got[1] != fmt.Sprint(n) || got[0] != sumStrings(got[1:]) {
		t.Errorf("summary total %v: want %d written and rows read = written + rejected + not written:\n%s", got, n, out.String())
	}
}

// syncBuffer is a goroutine-safe buffer that calls onLine with each
// complete line written to it, without its newline. Writes are not lines:
// a child process's output arrives in whatever pieces its pipe was read
// in, several lines or part of one.
type syncBuffer struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	onLine func(string)
	// lineStart is where in buf the line not yet ended begins.
	lineStart int
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	n, err := b.buf.Write(p)
	if b.onLine == nil {
		return n, err
	}
	for {
		rest := b.buf.Bytes()[b.lineStart:]
		i := bytes.IndexByte(rest, '\n')
		if i < 0 {
			return n, err
		}
		b.lineStart += i + 1
		b.onLine(string(rest[:i]))
	}
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// summaryTotal returns the row counts of the summary's total line: rows
// read, rows written, rows rejected and rows not written ("0" when the
// column is absent).
func summaryTotal(t *testing.T, summary string) [4]string {
	t.Helper()
	for _, line := range strings.Split(summary, "\n") {
		if f := strings.Fields(line); len(f) > 0 && f[0] == "total" {
			nums := f[1 : len(f)-2] // without items written and elapsed
			if len(nums) == 3 {
				nums = append(nums, "0")
			}
			return [4]string(nums)
		}
	}
	t.Fatalf("no total line in:\n%s", summary)
	return [4]string{}
}

func sumStrings(nums []string) string {
	var total int
	for _, s := range nums {
		var n int
		fmt.Sscan(s, &n)
		total += n
	}
	return fmt.Sprint(total)
}
