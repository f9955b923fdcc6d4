package follow_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5"

	"github.com/pg2dynamo/pg2dynamo/app"
	"github.com/pg2dynamo/pg2dynamo/extract"
	"github.com/pg2dynamo/pg2dynamo/fixtures"
	"github.com/pg2dynamo/pg2dynamo/follow"
	"github.com/pg2dynamo/pg2dynamo/load"
	"github.com/pg2dynamo/pg2dynamo/mapping"
	"github.com/pg2dynamo/pg2dynamo/pipeline"
	"github.com/pg2dynamo/pg2dynamo/report"
	"github.com/pg2dynamo/pg2dynamo/tools/testenv"
	"github.com/pg2dynamo/pg2dynamo/transform"
	"github.com/pg2dynamo/pg2dynamo/verify/outcome"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// logicalDatabase is a new database on a server with wal_level=logical
// (scripts/test.sh sets it): the test fails, not skips, without one.
func logicalDatabase(t *testing.T) string {
	url := testenv.NewDatabase(t)
	var level string
	if err := testenv.Connect(t, url).QueryRow(context.Background(), "SHOW wal_level").Scan(&level); err != nil {
		t.Fatal(err)
	}
	if level != "logical" {
		t.Fatalf("wal_level is %s: following changes needs logical (scripts/test.sh sets it: ALTER SYSTEM SET wal_level = logical and a restart)", level)
	}
	return url
}

// ownDynalite starts a dynalite for one test, stopped when it ends, so
// that tests in parallel do not queue on one single-threaded server.
func ownDynalite(t *testing.T) string {
	d, err := testenv.StartDynalite()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.Stop)
	return d.Endpoint
}

// run runs the CLI in-process.
func run(ctx context.Context, args ...string) (code int, stderr string) {
	var out, errb bytes.Buffer
	code = app.RunContext(ctx, args, &out, &errb)
	return code, out.String() + errb.String()
}

// workload is a domain's mix of changes: each op returns SQL statements
// (run in one transaction) for a random row.
type workload struct {
	domain, mapping string
	setup           func(t *testing.T, url string)
	ops             []func(r *rand.Rand) []string
}

func workloads(t *testing.T) []workload {
	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	fixture := func(domain string) func(*testing.T, string) {
		return func(t *testing.T, url string) {
			if _, err := fixtures.Load(context.Background(), testenv.Connect(t, url), domain, 0.25, 1); err != nil {
				t.Fatal(err)
			}
		}
	}
	return []workload{
		{domain: "tickets", mapping: filepath.Join(root, "fixtures", "mappings", "strategies", "tickets.yaml"), setup: fixture("tickets"),
			ops: []func(*rand.Rand) []string{
				// A parent rename fans out to the duplicates of users and
				// tickets (rarer: each writes hundreds of items).
				func(r *rand.Rand) []string {
					if r.IntN(8) > 0 {
						return nil
					}
					return []string{fmt.Sprintf("UPDATE orgs SET name = name || '+' WHERE org_id = %d", 1+r.IntN(5))}
				},
				func(r *rand.Rand) []string {
					return []string{fmt.Sprintf("UPDATE users SET name = left(name, 20) || '*' WHERE user_id = %d", 1+r.IntN(500))}
				},
				// Inserts, deletes, key updates (sort key, GSIs), moves
				// (partition key) of tickets.
				func(r *rand.Rand) []string {
					return []string{fmt.Sprintf(`INSERT INTO tickets SELECT (jsonb_populate_record(t, jsonb_build_object('ticket_id', (SELECT max(ticket_id) + 1 FROM tickets)))).* FROM tickets t WHERE ticket_id = (SELECT min(ticket_id) FROM tickets WHERE ticket_id >= %d)`, 1+r.IntN(5000))}
				},
				func(r *rand.Rand) []string {
					return []string{fmt.Sprintf("DELETE FROM tickets WHERE ticket_id = %d", 1+r.IntN(5000))}
				},
				func(r *rand.Rand) []string {
					return []string{fmt.Sprintf("UPDATE tickets SET created_at = created_at + interval '1 second', updated_at = now() WHERE ticket_id = %d", 1+r.IntN(5000))}
				},
				func(r *rand.Rand) []string {
					return []string{fmt.Sprintf("UPDATE tickets SET user_id = u.user_id, org_id = u.org_id FROM users u WHERE u.user_id = %d AND ticket_id = %d", 1+r.IntN(500), 1+r.IntN(5000))}
				},
				// A user deleted with its tickets.
				func(r *rand.Rand) []string {
					u := 1 + r.IntN(500)
					return []string{fmt.Sprintf("DELETE FROM tickets WHERE user_id = %d", u), fmt.Sprintf("DELETE FROM users WHERE user_id = %d", u)}
				},
			}},
		{domain: "customers", mapping: filepath.Join(root, "fixtures", "mappings", "strategies", "customers.yaml"), setup: fixture("customers"),
			ops: []func(*rand.Rand) []string{
				func(r *rand.Rand) []string {
					return []string{fmt.Sprintf("UPDATE customers SET name = left(name, 20) || '+', balance = balance + 1 WHERE customer_id = %d", 1+r.IntN(250))}
				},
				// An address moves: its key (label) changes, the embeds and
				// counts of two customers change.
				func(r *rand.Rand) []string {
					c := 1 + r.IntN(250) // at most 8 addresses a customer: the embed holds 10
					return []string{fmt.Sprintf(`UPDATE addresses SET customer_id = %d, label = 'm' || address_id || '-' || %d
						WHERE address_id = (SELECT min(address_id) FROM addresses WHERE address_id >= %d)
						AND (SELECT count(*) FROM addresses WHERE customer_id = %[1]d) < 8`, c, r.IntN(1000), 1+r.IntN(600))}
				},
				func(r *rand.Rand) []string {
					c := 1 + r.IntN(250)
					return []string{fmt.Sprintf(`INSERT INTO addresses SELECT (jsonb_populate_record(a, jsonb_build_object('address_id', (SELECT max(address_id) + 1 FROM addresses),
						'customer_id', %d, 'label', 'n' || (SELECT max(address_id) + 1 FROM addresses)))).* FROM addresses a
						WHERE address_id = (SELECT min(address_id) FROM addresses) AND (SELECT count(*) FROM addresses WHERE customer_id = %d) < 8`, c, c)}
				},
				func(r *rand.Rand) []string {
					return []string{fmt.Sprintf("DELETE FROM addresses WHERE address_id = %d", 1+r.IntN(600))}
				},
				func(r *rand.Rand) []string {
					return []string{fmt.Sprintf("UPDATE addresses SET city = city || 'x', zip = left(zip, 9) WHERE address_id = %d", 1+r.IntN(600))}
				},
			}},
		{domain: "attendance", mapping: filepath.Join("testdata", "attendance-mirror.yaml"), setup: fixture("attendance"),
			ops: []func(*rand.Rand) []string{
				// A renamed lecture fans out to its attendance items
				// (rarer: each writes hundreds of items).
				func(r *rand.Rand) []string {
					if r.IntN(8) > 0 {
						return nil
					}
					return []string{fmt.Sprintf("UPDATE lectures SET title = left(title, 30) || '+' WHERE lecture_id = %d", 1+r.IntN(50))}
				},
				// Association inserts and deletes: the item and its mirror,
				// and the lecture's count.
				func(r *rand.Rand) []string {
					return []string{fmt.Sprintf("INSERT INTO attendance SELECT %d, %d, now() WHERE EXISTS (SELECT FROM students WHERE student_id = %[1]d) AND EXISTS (SELECT FROM lectures WHERE lecture_id = %[2]d) ON CONFLICT DO NOTHING", 1+r.IntN(500), 1+r.IntN(50))}
				},
				func(r *rand.Rand) []string {
					return []string{fmt.Sprintf("DELETE FROM attendance WHERE (student_id, lecture_id) = (SELECT student_id, lecture_id FROM attendance WHERE student_id >= %d ORDER BY student_id, lecture_id LIMIT 1)", 1+r.IntN(500))}
				},
				// A key column update: the association moves to another lecture.
				func(r *rand.Rand) []string {
					l := 1 + r.IntN(50)
					return []string{fmt.Sprintf(`UPDATE attendance a SET lecture_id = %d WHERE (student_id, lecture_id) = (SELECT student_id, lecture_id FROM attendance WHERE student_id >= %d ORDER BY 1, 2 LIMIT 1)
						AND NOT EXISTS (SELECT FROM attendance b WHERE b.student_id = a.student_id AND b.lecture_id = %[1]d)`, l, 1+r.IntN(500))}
				},
				func(r *rand.Rand) []string {
					return []string{fmt.Sprintf("UPDATE students SET name = left(name, 20) || '*' WHERE student_id = %d", 1+r.IntN(500))}
				},
			}},
		{domain: "northwind", mapping: filepath.Join(root, "examples", "northwind", "mapping.yaml"),
			setup: func(t *testing.T, url string) {
				psqlFile(t, url, filepath.Join(root, "examples", "northwind", "northwind.sql"))
			},
			ops: []func(*rand.Rand) []string{
				func(r *rand.Rand) []string {
					return []string{fmt.Sprintf("UPDATE products SET unit_price = unit_price + 1 WHERE product_id = %d", 1+r.IntN(77))}
				},
				// An order moves to another customer: its partition key.
				func(r *rand.Rand) []string {
					return []string{fmt.Sprintf("UPDATE orders SET customer_id = (SELECT customer_id FROM customers ORDER BY customer_id OFFSET %d LIMIT 1) WHERE order_id = %d", r.IntN(90), 10248+r.IntN(830))}
				},
				func(r *rand.Rand) []string {
					return []string{fmt.Sprintf("UPDATE order_details SET quantity = quantity + 1 WHERE order_id = %d", 10248+r.IntN(830))}
				},
				func(r *rand.Rand) []string {
					o := 10248 + r.IntN(830)
					return []string{fmt.Sprintf("DELETE FROM order_details WHERE order_id = %d", o), fmt.Sprintf("DELETE FROM orders WHERE order_id = %d", o)}
				},
				func(r *rand.Rand) []string {
					return []string{fmt.Sprintf("INSERT INTO order_details SELECT order_id, %d, 1, 1, 0 FROM orders WHERE order_id = %d ON CONFLICT DO NOTHING", 1+r.IntN(77), 10248+r.IntN(830))}
				},
				func(r *rand.Rand) []string {
					return []string{fmt.Sprintf("UPDATE customers SET company_name = left(company_name, 30) || '+' WHERE customer_id = (SELECT customer_id FROM customers ORDER BY customer_id OFFSET %d LIMIT 1)", r.IntN(90))}
				},
			}},
	}
}

// psqlFile runs a SQL file with psql.
func psqlFile(t *testing.T, url, file string) {
	t.Helper()
	out, err := exec.Command("psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", url, "-f", file).CombinedOutput()
	if err != nil {
		t.Fatalf("psql -f %s: %v\n%s", file, err, out)
	}
}

// runWorkload commits random changes of w until at least n rows changed,
// in transactions of a few statements, and returns the rows changed.
func runWorkload(ctx context.Context, t *testing.T, url string, w workload, n int, seed uint64) int {
	return pacedWorkload(ctx, t, url, w, n, seed, 0)
}

// pacedWorkload is runWorkload with a pause after each transaction. Its
// commits do not wait for the WAL flush (synchronous_commit off): the
// changes reach the slot all the same, a little later.
func pacedWorkload(ctx context.Context, t *testing.T, url string, w workload, n int, seed uint64, pause time.Duration) int {
	conn := testenv.Connect(t, url)
	if _, err := conn.Exec(ctx, "SET synchronous_commit = off"); err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(seed, 1))
	changed := 0
	for changed < n && ctx.Err() == nil {
		err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
			for range 4 {
				for _, sql := range w.ops[r.IntN(len(w.ops))](r) {
					tag, err := tx.Exec(ctx, sql)
					if err != nil {
						return fmt.Errorf("%s: %w", sql, err)
					}
					changed += int(tag.RowsAffected())
				}
			}
			return nil
		})
		if err != nil {
			if ctx.Err() == nil { // not the end of a workload stopped on purpose
				t.Errorf("workload: %v", err)
			}
			return changed
		}
		time.Sleep(pause)
	}
	return changed
}

// Changes made during the full load and after it reach the table: after
// the workload, a follow that catches up leaves the table equal, item by
// item, to what a full load of the source now writes, and verify passes.
// The workload mixes inserts, updates, deletes, parent renames that fan
// out to duplicates, child inserts and deletes that change embeds and
// counts, association deletes that remove mirrored items, and updates of
// key columns.
func TestFollowKeepsTheTableInStep(t *testing.T) {
	t.Parallel()
	const changes = 10_000
	for _, w := range workloads(t) {
		t.Run(w.domain, func(t *testing.T) {
			t.Parallel()
			endpoint := ownDynalite(t)
			url := logicalDatabase(t)
			w.setup(t, url)
			conn := testenv.Connect(t, url)
			if _, err := conn.Exec(context.Background(), `DO $$ DECLARE r record; BEGIN
				FOR r IN SELECT oid::regclass AS t FROM pg_class WHERE relkind = 'r' AND relnamespace = 'public'::regnamespace LOOP
					EXECUTE format('ALTER TABLE %s REPLICA IDENTITY FULL', r.t);
				END LOOP; END $$`); err != nil {
				t.Fatal(err)
			}
			table := testenv.TableName(w.domain)
			dir := t.TempDir()
			args := []string{"migrate", "--mapping", w.mapping, "--source", url, "--endpoint-url", endpoint,
				"--table", table, "--create-table", "--follow", "--progress", "none", "--progress-interval", "1h",
				"--rejects", filepath.Join(dir, "rejects.jsonl"), "--checkpoint", filepath.Join(dir, "checkpoint.json")}
			t.Cleanup(func() {
				if code, out := run(context.Background(), "drop-slot", "--mapping", w.mapping, "--source", url, "--table", table); code != 0 {
					t.Errorf("drop-slot: exit %d\n%s", code, out)
				}
			})

			// The follow starts; the workload runs during its full load
			// and after; the follow is stopped (as by SIGINT), then
			// resumed until caught up.
			ctx, stop := context.WithCancel(context.Background())
			var wg sync.WaitGroup
			var code int
			var first lockedBuffer
			ended := make(chan struct{})
			wg.Add(1)
			go func() { defer wg.Done(); defer close(ended); code = app.RunContext(ctx, args, &first, &first) }()
			// Half the changes from the start, during the full load,
			// the other half once it is done, while streaming.
			changed := runWorkload(context.Background(), t, url, w, changes/2, 1)
			loading := !strings.Contains(first.String(), "following slot")
			if err := awaitOutput(&first, "following slot", "the full load to end and the follow to stream", ended); err != nil {
				stop()
				wg.Wait()
				t.Fatalf("migrate --follow: %v (exit %d)\n%s", err, code, firstLines(first.String(), 60))
			}
			changed += runWorkload(context.Background(), t, url, w, changes-changed, 2)
			stop()
			wg.Wait()
			out := first.String()
			if code != 0 || !strings.Contains(out, "stopped at") {
				t.Fatalf("migrate --follow, stopped: exit %d\n%s", code, out)
			}
			if !loading {
				t.Logf("the first half of the workload ended after the full load")
			}
			code, out = run(context.Background(), append(args, "--resume", "--until-caught-up")...)
			if code != 0 || !strings.Contains(out, "caught up at") {
				t.Fatalf("migrate --follow --resume --until-caught-up: exit %d\n%s", code, out)
			}
			t.Logf("%d rows changed; %s", changed, lastLine(out, "follow: applied"))

			got := scanTable(t, endpoint, table)
			want := deriveItems(t, url, w.mapping, table)
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("table after the follow (-derived from the source now +scanned), %d and %d items:\n%s", len(want), len(got), firstLines(d, 40))
			}
			// The follow has stopped: verify says so and compares at once
			// (it used to wait its whole --follow-wait for the slot).
			code, out = run(context.Background(), "verify", "--mapping", w.mapping, "--source", url, "--endpoint-url", endpoint, "--table", table)
			if code != 0 || !strings.Contains(out, "verify PASSED") {
				t.Errorf("verify after the follow: exit %d\n%s", code, firstLines(out, 40))
			}
			if !strings.Contains(out, "is not running") {
				t.Errorf("verify did not say the follow is stopped:\n%s", firstLines(out, 20))
			}
		})
	}
}

func lastLine(s, prefix string) string {
	lines := strings.Split(s, "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if strings.HasPrefix(lines[i], prefix) {
			return lines[i]
		}
	}
	return ""
}

func firstLines(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = append(lines[:n], fmt.Sprintf("… %d more lines", len(lines)-n))
	}
	return strings.Join(lines, "\n")
}

// scanTable returns the table's items, canonical and sorted.
func scanTable(t *testing.T, endpoint, table string) []string {
	t.Helper()
	c, err := load.NewClient(context.Background(), load.ClientConfig{EndpointURL: endpoint})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	p := dynamodb.NewScanPaginator(c, &dynamodb.ScanInput{TableName: aws.String(table)})
	for p.HasMorePages() {
		page, err := p.NextPage(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, testenv.CanonicalItems(page.Items)...)
	}
	slices.Sort(out)
	return out
}

// prepared loads mappingFile for table and checks it against the source at
// url, as migrate does: the mapping, the source (closed when the test
// ends) and the plans.
func prepared(t *testing.T, url, mappingFile, table string) (*mapping.Mapping, *extract.Source, []*transform.Plan) {
	t.Helper()
	ctx := context.Background()
	m, err := mapping.Load(mappingFile)
	if err != nil {
		t.Fatal(err)
	}
	m.Table.Name = table
	src, err := extract.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { src.Close(context.Background()) })
	plans, err := pipeline.Prepare(ctx, src, m)
	if err != nil {
		t.Fatal(err)
	}
	return m, src, plans
}

// deriveItems returns the items a full load of the source writes now,
// canonical and sorted.
func deriveItems(t *testing.T, url, mappingFile, table string) []string {
	t.Helper()
	ctx := context.Background()
	m, src, plans := prepared(t, url, mappingFile, table)
	if err := src.Begin(ctx); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var out []string
	sink := load.SinkFunc(func(_ context.Context, batch []transform.Item) error {
		mu.Lock()
		defer mu.Unlock()
		for _, it := range batch {
			out = append(out, testenv.CanonicalItem(it.Attrs))
		}
		return nil
	})
	if _, err := pipeline.Run(ctx, pipeline.Postgres(src), m, plans, sink, pipeline.Options{}); err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

var (
	buildOnce sync.Once
	binary    string
	buildErr  error
)

// pg2dynamo builds the binary once per test run.
func pg2dynamo(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		root, err := testenv.RepoRoot()
		if err != nil {
			buildErr = err
			return
		}
		dir, err := os.MkdirTemp("", "pg2dynamo-follow-test")
		if err != nil {
			buildErr = err
			return
		}
		binary = filepath.Join(dir, "pg2dynamo")
		out, err := exec.Command("go", "build", "-o", binary, root).CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binary
}

// lockedBuffer is a bytes.Buffer safe for a process's writes and the
// test's reads.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// awaitOutput waits until out holds text (testenv.Poll), and fails,
// saying it waited for what, when ended is closed first (the run is over)
// or after eventWait.
func awaitOutput(out *lockedBuffer, text, what string, ended <-chan struct{}) error {
	return testenv.Poll(fmt.Sprintf("%s (%q)", what, text), eventWait, ended, func() bool {
		return strings.Contains(out.String(), text)
	})
}

// SIGKILL at five points, during the full load and while streaming, with
// a workload running throughout: each run resumes from the slot and the
// checkpoint, and the end state is exact. Changes are replayed, not
// skipped: a killed run had applied changes past the position the slot
// had confirmed, and the next run streamed them again.
func TestFollowSurvivesSIGKILL(t *testing.T) {
	if testing.Short() {
		t.Skip("kills five runs")
	}
	t.Parallel()
	w := workloads(t)[0] // tickets
	url := logicalDatabase(t)
	w.setup(t, url)
	conn := testenv.Connect(t, url)
	if _, err := conn.Exec(context.Background(), "ALTER TABLE tickets REPLICA IDENTITY FULL"); err != nil {
		t.Fatal(err)
	}
	table := testenv.TableName("follow-kill")
	dir := t.TempDir()
	endpoint := ownDynalite(t)
	args := []string{"migrate", "--mapping", w.mapping, "--source", url, "--endpoint-url", endpoint,
		"--table", table, "--create-table", "--follow", "--progress", "none", "--progress-interval", "1ms",
		"--rejects", filepath.Join(dir, "rejects.jsonl"), "--checkpoint", filepath.Join(dir, "checkpoint.json")}
	t.Cleanup(func() {
		run(context.Background(), "drop-slot", "--mapping", w.mapping, "--source", url, "--table", table)
	})

	workCtx, stopWork := context.WithCancel(context.Background())
	defer stopWork()
	done := make(chan int, 1)
	// The workload runs until the kills are over.
	go func() { done <- pacedWorkload(workCtx, t, url, w, 1<<30, 2, 2*time.Millisecond) }()

	r := rand.New(rand.NewPCG(3, 4))
	duringLoad, replayed := 0, 0
	for kill := range 5 {
		// The first run's full load is held to 1,000 write units a
		// second (seconds for this fixture), so that its kill, soon
		// after the slot is created, lands in the load on a machine
		// however busy; the other runs resume.
		a := append(slices.Clone(args), "--max-write-units", "1000")
		if kill > 0 {
			a = append(slices.Clone(args), "--resume")
		}
		var out lockedBuffer
		cmd := exec.Command(pg2dynamo(t), a...)
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		ended := make(chan struct{})
		go func() { cmd.Wait(); close(ended) }()
		// The first kill lands in the full load (the slot is created
		// before it), the others while streaming.
		wait, what := "created replication slot", "the slot to be created"
		if kill > 0 {
			wait, what = "following slot", "the follow to stream"
		}
		if err := awaitOutput(&out, wait, what, ended); err != nil {
			cmd.Process.Kill()
			<-ended
			t.Fatalf("run %d: %v\n%s", kill+1, err, firstLines(out.String(), 60))
		}
		// The moment of the kill is sought while the run runs, for up
		// to eventWait; past that it lands where the run is (the end
		// state must be exact wherever it lands).
		deadline := time.Now().Add(eventWait)
		seeking := func() bool {
			select {
			case <-ended:
				return false
			default:
				return time.Now().Before(deadline)
			}
		}
		switch {
		case kill == 0:
			time.Sleep(time.Duration(50+r.IntN(150)) * time.Millisecond)
		case kill == 1:
			time.Sleep(time.Duration(300+r.IntN(1200)) * time.Millisecond)
		default:
			// After the run has applied a window of its own, at a random
			// point of the next: progress between kills, and a window
			// in flight to replay.
			start := slotConfirmed(t, conn, follow.DefaultName(table))
			for seeking() {
				if a, _ := lastStatus(t, out.String()); a > start {
					break
				}
				time.Sleep(5 * time.Millisecond)
			}
			// Then while a window is being applied (its transactions
			// received, the slot not yet told), at a random moment of it.
			for seeking() {
				if a, rcv := lastStatus(t, out.String()); rcv > a {
					break
				}
				time.Sleep(time.Millisecond)
			}
			time.Sleep(time.Duration(r.IntN(20)) * time.Millisecond)
		}
		cmd.Process.Kill()
		<-ended
		text := out.String()
		if !strings.Contains(text, "following slot") {
			duringLoad++
		}
		applied, received := lastStatus(t, text)
		confirmed := slotConfirmed(t, conn, follow.DefaultName(table))
		if received > confirmed {
			replayed++
		}
		t.Logf("kill %d: applied %s, received %s, slot confirmed %s, during the full load: %v", kill+1, applied, received, confirmed, !strings.Contains(text, "following slot"))
	}
	stopWork()
	changed := <-done
	code, out := run(context.Background(), append(args, "--resume", "--until-caught-up")...)
	if code != 0 || !strings.Contains(out, "caught up at") {
		t.Fatalf("the last run: exit %d\n%s", code, out)
	}
	if duringLoad == 0 || replayed == 0 {
		t.Errorf("%d kills during the full load, %d with changes received past the slot's confirmed position (replayed by the next run); want at least one of each", duringLoad, replayed)
	}
	if got, want := scanTable(t, endpoint, table), deriveItems(t, url, w.mapping, table); !slices.Equal(got, want) {
		t.Errorf("after 5 kills and %d changes: the table (%d items) differs from what a full load writes now (%d items):\n%s",
			changed, len(got), len(want), firstLines(cmp.Diff(want, got), 40))
	}
}

// lastStatus is the last "follow: applied" status in a run's output: the
// position applied and the end of what was received (in flight past it,
// or equal); 0 when none.
func lastStatus(t *testing.T, out string) (applied, received pglogrepl.LSN) {
	line := lastLine(out, "follow: applied ")
	if line == "" {
		return 0, 0
	}
	head, _, _ := strings.Cut(strings.TrimPrefix(line, "follow: applied "), ":")
	a, flight, inFlight := strings.Cut(head, ", in flight to ")
	var err error
	if applied, err = pglogrepl.ParseLSN(a); err != nil {
		t.Fatalf("status %q: %v", line, err)
	}
	received = applied
	if inFlight {
		if received, err = pglogrepl.ParseLSN(flight); err != nil {
			t.Fatalf("status %q: %v", line, err)
		}
	}
	return applied, received
}

// slotConfirmed is the slot's confirmed position.
func slotConfirmed(t *testing.T, conn *pgx.Conn, slot string) pglogrepl.LSN {
	lsn, ok, err := follow.SlotPosition(context.Background(), conn, slot)
	if err != nil || !ok {
		t.Fatalf("slot %s: exists %v, %v", slot, ok, err)
	}
	return lsn
}

// slotStart is what migrate --follow sets up before its full load, for
// the tests that drive package follow directly.
type slotStart struct {
	graph *follow.Graph
	// name is the slot's and the publication's (follow.DefaultName).
	name   string
	stream *follow.Stream
	slot   follow.Slot
	// sink writes to m's table, created at the test's dynalite.
	sink *load.DynamoDB
}

// startSlot makes m's dependency graph, its publication and its slot
// (dropped when the test ends, after the stream is closed) on a stream of
// its own, and creates m's table at endpoint.
func startSlot(t *testing.T, url string, conn *pgx.Conn, endpoint string, m *mapping.Mapping, plans []*transform.Plan) slotStart {
	t.Helper()
	ctx := context.Background()
	g, err := follow.NewGraph(ctx, conn, m, plans)
	if err != nil {
		t.Fatal(err)
	}
	name := follow.DefaultName(m.Table.Name)
	if _, err := follow.EnsurePublication(ctx, conn, name, g); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { follow.Drop(context.Background(), conn, name, name) })
	stream, err := follow.Dial(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stream.Close(context.Background()) })
	slot, err := stream.CreateSlot(ctx, name, nil)
	if err != nil {
		t.Fatal(err)
	}
	client, err := load.NewClient(ctx, load.ClientConfig{EndpointURL: endpoint})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := load.EnsureTable(ctx, client, m, true); err != nil {
		t.Fatal(err)
	}
	return slotStart{graph: g, name: name, stream: stream, slot: slot,
		sink: load.NewDynamoDB(client, m.Table.Name, m.Table.PartitionKey, m.Table.SortKey)}
}

// The handoff is gap-free: changes committed after the slot is created,
// while the full load reads its snapshot, are not in the load (it reads the
// state before them) and all arrive through the slot.
func TestHandoffIsGapFree(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := workloads(t)[0] // tickets
	url := logicalDatabase(t)
	// Scale 0.1: 2,000 tickets, whose changes below (about 2,400) still
	// fill more than one window (follow.Options.Window).
	if _, err := fixtures.Load(ctx, testenv.Connect(t, url), "tickets", 0.1, 1); err != nil {
		t.Fatal(err)
	}
	conn := testenv.Connect(t, url)
	testenv.Exec(t, url, "ALTER TABLE tickets REPLICA IDENTITY FULL")
	endpoint := ownDynalite(t)
	m, src, plans := prepared(t, url, w.mapping, testenv.TableName("handoff"))
	sl := startSlot(t, url, conn, endpoint, m, plans)
	g, name, stream, slot, sink := sl.graph, sl.name, sl.stream, sl.slot, sl.sink

	// Between the slot's creation and the full load: every ticket's
	// subject changes, a user is renamed (a duplicate on its tickets),
	// tickets are deleted and inserted.
	testenv.Exec(t, url, `UPDATE tickets SET subject = 'after the slot ' || ticket_id;
		UPDATE users SET name = 'renamed after the slot' WHERE user_id = 7;
		DELETE FROM tickets WHERE ticket_id % 10 = 0;
		INSERT INTO tickets SELECT (jsonb_populate_record(t, jsonb_build_object('ticket_id', ticket_id + 1000000))).* FROM tickets t WHERE ticket_id % 10 = 1`)

	if err := src.BeginAt(ctx, slot.Snapshot); err != nil {
		t.Fatal(err)
	}
	if _, err := pipeline.Run(ctx, pipeline.Postgres(src), m, plans, sink, pipeline.Options{Readers: 2}); err != nil {
		t.Fatal(err)
	}
	src.End(ctx)
	loaded := scanTable(t, endpoint, m.Table.Name)
	if n := countContaining(loaded, "after the slot"); n != 0 {
		t.Fatalf("the full load holds %d items changed after the slot was created: it did not read the slot's snapshot", n)
	}

	a := follow.NewApplier(g, m, src, sink)
	defer a.Close()
	st, err := follow.Run(ctx, stream, a, conn, follow.Options{Slot: name, Publication: name, From: slot.Consistent, UntilCaughtUp: true})
	if err != nil || !st.CaughtUp {
		t.Fatalf("follow: %+v, %v", st, err)
	}
	got, want := scanTable(t, endpoint, m.Table.Name), deriveItems(t, url, w.mapping, m.Table.Name)
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("after the follow (-derived now +scanned):\n%s", firstLines(d, 30))
	}
	if countContaining(got, "after the slot") == 0 || st.Changes == 0 {
		t.Errorf("%d changes applied; want the changes committed after the slot", st.Changes)
	}
}

func countContaining(items []string, s string) int {
	n := 0
	for _, it := range items {
		if strings.Contains(it, s) {
			n++
		}
	}
	return n
}

// verify works while a follow runs: once writes stop, it waits for the
// follow to apply every change its snapshot holds, and passes with the
// follow still streaming (the cutover runbook's check). The follow has a
// publication of its own name (--publication), which verify is given.
func TestVerifyWhileFollowing(t *testing.T) {
	t.Parallel()
	w := workloads(t)[0] // tickets
	url := logicalDatabase(t)
	w.setup(t, url)
	testenv.Exec(t, url, "ALTER TABLE tickets REPLICA IDENTITY FULL")
	endpoint := ownDynalite(t)
	table := testenv.TableName("verify-follow")
	dir := t.TempDir()
	args := []string{"migrate", "--mapping", w.mapping, "--source", url, "--endpoint-url", endpoint,
		"--table", table, "--create-table", "--follow", "--progress", "none", "--publication", "tickets_follow",
		"--rejects", filepath.Join(dir, "rejects.jsonl"), "--checkpoint", filepath.Join(dir, "checkpoint.json")}
	t.Cleanup(func() {
		run(context.Background(), "drop-slot", "--mapping", w.mapping, "--source", url, "--table", table, "--publication", "tickets_follow")
	})
	ctx, stop := context.WithCancel(context.Background())
	var out lockedBuffer
	done := make(chan int, 1)
	ended := make(chan struct{})
	go func() { done <- app.RunContext(ctx, args, &out, &out); close(ended) }()
	if err := awaitOutput(&out, "following slot", "the full load to end and the follow to stream", ended); err != nil {
		stop()
		t.Fatalf("migrate --follow: %v (exit %d)\n%s", err, <-done, firstLines(out.String(), 60))
	}
	verifyJSON := func(name string) (int, string, report.Report) {
		path := filepath.Join(dir, name)
		code, vout := run(context.Background(), "verify", "--mapping", w.mapping, "--source", url, "--endpoint-url", endpoint,
			"--table", table, "--publication", "tickets_follow", "--report-json", path)
		var r report.Report
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("verify %s: exit %d and no JSON report (%v)\n%s", name, code, err, firstLines(vout, 40))
		}
		if err := json.Unmarshal(b, &r); err != nil {
			t.Fatal(err)
		}
		return code, vout, r
	}
	// While the workload writes, the items the follow changes during the
	// check are in flight, not wrong: verify passes and counts them.
	// The workload without the deletes of users and tickets, which
	// would empty the tables over a long run, and without the org
	// renames, each some 275 items: they only grow the backlog the follow
	// works off afterwards, while a user rename fans out to the user's
	// tickets too. Left: renames that fan out, inserts, key updates and
	// moves. Ten transactions a second keep changes arriving all through
	// a check, which is what the check is about (30 to 74 items in flight
	// in five quiet runs, where the follow lags least).
	steady := w
	steady.ops = slices.Concat(w.ops[1:3], w.ops[4:6])
	wctx, stopWork := context.WithCancel(context.Background())
	working := make(chan int)
	go func() { working <- pacedWorkload(wctx, t, url, steady, 1<<30, 5, 100*time.Millisecond) }()
	code, vout, r := verifyJSON("during.json")
	if code != 0 || r.Counts.InFlight.Total == 0 || r.Totals.InFlight != r.Counts.InFlight.Total {
		t.Errorf("verify while the workload writes: exit %d, %d items in flight (%d by entity); want exit 0 and some in flight\n%s",
			code, r.Counts.InFlight.Total, r.Totals.InFlight, firstLines(vout, 40))
	}
	t.Logf("verify while the workload writes: %d items expected, %d in flight, %d skipped in access patterns",
		r.Totals.Expected, r.Counts.InFlight.Total, patternsInFlight(r.Patterns))
	// A stale item no change reaches is still wrong while writes go on.
	client, err := load.NewClient(context.Background(), load.ClientConfig{EndpointURL: endpoint})
	if err != nil {
		t.Fatal(err)
	}
	planted := map[string]types.AttributeValue{"PK": &types.AttributeValueMemberS{Value: "USER#999999"},
		"SK": &types.AttributeValueMemberS{Value: "TICKET#planted"}, "type": &types.AttributeValueMemberS{Value: "Ticket"}}
	if _, err := client.PutItem(context.Background(), &dynamodb.PutItemInput{TableName: aws.String(table), Item: planted}); err != nil {
		t.Fatal(err)
	}
	code, vout, r = verifyJSON("planted.json")
	extra, err := r.Extra.Slice()
	if err != nil {
		t.Fatal(err)
	}
	if code != app.ExitMismatch || len(extra) != 1 || extra[0].PK != "USER#999999" || r.Counts.Missing.Total+r.Counts.Changed.Total != 0 {
		t.Errorf("verify with a planted item while the workload writes: exit %d, %d extra (%s), %d missing, %d differing; want exit %d and only the planted item\n%s",
			code, len(extra), testenv.Few(extra), r.Counts.Missing.Total, r.Counts.Changed.Total, app.ExitMismatch, firstLines(vout, 40))
	}
	if _, err := client.DeleteItem(context.Background(), &dynamodb.DeleteItemInput{TableName: aws.String(table),
		Key: map[string]types.AttributeValue{"PK": planted["PK"], "SK": planted["SK"]}}); err != nil {
		t.Fatal(err)
	}
	stopWork()
	t.Logf("workload during the two checks: %d rows changed", <-working)
	// Writes have stopped; the follow may still be applying them: verify
	// waits for it (an event: the slot reaching the check's snapshot),
	// bounded far above a loaded machine's slowest catch-up. The backlog
	// grows with the time the two checks took (the workload runs until
	// they end), so the bound is three event waits.
	code, vout = run(context.Background(), "verify", "--mapping", w.mapping, "--source", url, "--endpoint-url", endpoint, "--table", table,
		"--follow-wait", (3 * eventWait).String())
	stop()
	if fcode := <-done; fcode != 0 || !strings.Contains(out.String(), "stopped at") {
		t.Errorf("the follow: exit %d\n%s", fcode, out.String())
	}
	if code != 0 || !strings.Contains(vout, "has applied every change this check's snapshot holds") {
		t.Errorf("verify while following: exit %d\n%s", code, firstLines(vout, 40))
	}
}

func patternsInFlight(prs []outcome.PatternResult) int {
	n := 0
	for _, p := range prs {
		n += p.InFlight
	}
	return n
}

// followedChange is a follow of a small domain: its schema loaded into a
// new database, migrate --follow --until-caught-up into its own dynalite,
// then change committed and the follow resumed until caught up.
type followedChange struct {
	url, endpoint, table, mapping string
	loadOut, out                  string // the two runs' output
	code                          int    // the second run's exit code
	rejects                       []pipeline.Reject
	args                          []string // migrate --follow's, without --resume
}

// resume runs migrate --follow --resume --until-caught-up again, with
// more flags: its exit code and output.
func (f followedChange) resume(more ...string) (int, string) {
	return run(context.Background(), append(append(f.args, "--resume"), more...)...)
}

// loadAgain follows the advice of a follow that cannot go on: pg2dynamo
// drop-slot, then migrate --follow --prune (the table loaded again, its
// stale items deleted); it fails the test unless both exit 0.
func (f followedChange) loadAgain(t *testing.T) {
	t.Helper()
	if code, out := run(context.Background(), "drop-slot", "--mapping", f.mapping, "--source", f.url, "--table", f.table); code != 0 {
		t.Fatalf("drop-slot: exit %d\n%s", code, out)
	}
	if code, out := run(context.Background(), append(f.args, "--prune")...); code != 0 {
		t.Fatalf("migrate --follow --prune: exit %d\n%s", code, out)
	}
}

// setSourceParam adds a session parameter (name=value) to the source URL
// in f's migrate args.
func (f *followedChange) setSourceParam(param string) {
	for i, a := range f.args {
		if a == f.url {
			f.args[i] = withParam(f.url, param)
		}
	}
}

// inStep fails the test unless the table holds exactly what a full load
// of the source writes now, and verify agrees.
func (f followedChange) inStep(t *testing.T) {
	t.Helper()
	f.matchesFullLoad(t)
	f.verify(t)
}

// matchesFullLoad fails the test unless the table holds exactly what a
// full load of the source writes now.
func (f followedChange) matchesFullLoad(t *testing.T) {
	t.Helper()
	want := deriveItems(t, f.url, f.mapping, f.table)
	got := scanTable(t, f.endpoint, f.table)
	if !slices.Equal(want, got) {
		t.Errorf("table against a full load of the source now (-want +got):\n%s", firstLines(cmp.Diff(want, got), 40))
	}
}

func followChange(t *testing.T, mappingFile, schema, change string) followedChange {
	t.Helper()
	return followChanges(t, mappingFile, schema, change)
}

// followChanges is followChange with changes committed one after another,
// each in its own transaction, then args added to the resumed run.
func followChanges(t *testing.T, mappingFile, schema string, changes ...string) followedChange {
	t.Helper()
	return followSetup(t, mappingFile, func(url string) { testenv.Exec(t, url, schema) }, nil, changes...)
}

// followChangesWith is followChanges with more flags for every run, the
// first included.
func followChangesWith(t *testing.T, mappingFile, schema string, flags []string, changes ...string) followedChange {
	t.Helper()
	return followSetup(t, mappingFile, func(url string) { testenv.Exec(t, url, schema) }, flags, changes...)
}

// followSetup is followChangesWith with the source's tables made by
// setup, which gets the new database's URL.
func followSetup(t *testing.T, mappingFile string, setup func(url string), flags []string, changes ...string) followedChange {
	t.Helper()
	f := followedChange{endpoint: ownDynalite(t), url: logicalDatabase(t), mapping: mappingFile}
	setup(f.url)
	f.table = testenv.TableName(strings.TrimSuffix(filepath.Base(mappingFile), ".yaml"))
	dir := t.TempDir()
	rejects := filepath.Join(dir, "rejects.jsonl")
	args := []string{"migrate", "--mapping", mappingFile, "--source", f.url, "--endpoint-url", f.endpoint, "--table", f.table,
		"--follow", "--until-caught-up", "--progress", "none", "--rejects", rejects, "--checkpoint", filepath.Join(dir, "checkpoint.json")}
	args = append(args, flags...)
	t.Cleanup(func() {
		run(context.Background(), "drop-slot", "--mapping", mappingFile, "--source", f.url, "--table", f.table)
	})
	code, out := run(context.Background(), append(args, "--create-table")...)
	if code != 0 {
		t.Fatalf("migrate --follow: exit %d\n%s", code, out)
	}
	f.loadOut = out
	for _, change := range changes {
		testenv.Exec(t, f.url, change)
	}
	f.args = args
	f.code, f.out = run(context.Background(), append(args, "--resume")...)
	b, err := os.ReadFile(rejects)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if line == "" {
			continue
		}
		var r pipeline.Reject
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("rejects: %q: %v", line, err)
		}
		f.rejects = append(f.rejects, r)
	}
	return f
}

// verify runs verify of the followed table against its source.
func (f followedChange) verify(t *testing.T) {
	t.Helper()
	if code, out := run(context.Background(), "verify", "--mapping", f.mapping, "--source", f.url, "--endpoint-url", f.endpoint, "--table", f.table); code != 0 {
		t.Errorf("verify: exit %d\n%s", code, firstLines(out, 30))
	}
}

// Two rows that render one item key, changed in one window: the later
// (in primary-key order) is a reject, as in a full load, not dropped
// without a word; the follow says at its start that it cannot see such
// collisions across windows.
func TestFollowRejectsADuplicateKey(t *testing.T) {
	t.Parallel()
	f := followChange(t, filepath.Join("testdata", "notes-by-owner.yaml"),
		`CREATE TABLE notes (note_id int PRIMARY KEY, owner text NOT NULL, body text);
		ALTER TABLE notes REPLICA IDENTITY FULL;
		INSERT INTO notes VALUES (1, 'a', 'first')`,
		`INSERT INTO notes VALUES (3, 'b', 'later'), (2, 'b', 'kept')`)
	if !strings.Contains(f.loadOut, "the keys of Note are not proven unique") {
		t.Errorf("the follow did not say it cannot check Note's keys across windows:\n%s", f.loadOut)
	}
	// Exit 3: rows were rejected.
	if f.code != 3 || !strings.Contains(f.out, "1 rejected") {
		t.Fatalf("migrate --follow --resume: exit %d, want 3 and one row rejected\n%s", f.code, f.out)
	}
	if len(f.rejects) != 1 {
		t.Fatalf("rejects: want one, got %+v", f.rejects)
	}
	if r := f.rejects[0]; r.Entity != "Note" || fmt.Sprint(r.SourceKey["note_id"]) != "3" || !strings.HasPrefix(r.Reason, "duplicate primary key") {
		t.Errorf("reject %+v: want note 3, a duplicate primary key", r)
	}
	got := strings.Join(scanTable(t, f.endpoint, f.table), "\n")
	if strings.Count(got, "\n") != 1 || !strings.Contains(got, `"kept"`) || strings.Contains(got, `"later"`) {
		t.Errorf("table: want note 1's item and note 2's (the earlier row keeps OWNER#b), got:\n%s", got)
	}
	f.verify(t)
}

// A changed row whose item and mirror share a key, and two rows of one
// window that render each other's keys: each rejected whole, as the full
// load rejects them, and verify passes.
func TestFollowRejectsMirrorCollisions(t *testing.T) {
	t.Parallel()
	f := followChange(t, filepath.Join("testdata", "friends-mirror.yaml"),
		`CREATE TABLE friends (a integer, b integer, PRIMARY KEY (a, b));
		INSERT INTO friends VALUES (1, 2), (3, 4)`,
		`INSERT INTO friends VALUES (7, 6), (5, 5), (6, 7)`)
	if f.code != 3 || !strings.Contains(f.out, "2 rejected") {
		t.Fatalf("migrate --follow --resume: exit %d, want 3 and two rows rejected\n%s", f.code, f.out)
	}
	var got []string
	for _, r := range f.rejects {
		got = append(got, fmt.Sprintf("%v,%v: %s", r.SourceKey["a"], r.SourceKey["b"], r.Reason))
	}
	slices.Sort(got)
	want := []string{
		`5,5: duplicate primary key (PK "U#0000000005", SK "F#0000000005"): the row's own items (a mirror of itself) have the same key`,
		`7,6: duplicate primary key (PK "U#0000000007", SK "F#0000000006"): an earlier row of entity Friend keeps it (in this window of changes)`,
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("rejects (-want +got):\n%s", d)
	}
	if n := len(scanTable(t, f.endpoint, f.table)); n != 6 {
		t.Errorf("%d items; want 6, (1,2), (3,4) and (6,7) each both ways", n)
	}
	f.verify(t)
}
