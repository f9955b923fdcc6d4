package follow_test

import (
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/pg2dynamo/pg2dynamo/follow"
	"github.com/pg2dynamo/pg2dynamo/tools/faultproxy"
	"github.com/pg2dynamo/pg2dynamo/tools/testenv"
)

// Changes that reach items through the catalog alone, with no row change
// in the WAL, and changes of the publication, after which pgoutput leaves
// changes out: each, made while the follow streams and while it is
// stopped, ends with the table equal to a full load of the final source,
// either derived again by the follow or through the advice of a stop
// that names it.

const deskSchema = `CREATE TYPE ticket_status AS ENUM ('open', 'pending', 'closed');
	CREATE TABLE users (user_id int PRIMARY KEY, role varchar(20) NOT NULL, name text);
	CREATE TABLE tickets (ticket_id int PRIMARY KEY, user_id int NOT NULL REFERENCES users, status ticket_status NOT NULL, priority int NOT NULL);
	CREATE TABLE events (event_id int NOT NULL, day date NOT NULL, what text, PRIMARY KEY (event_id, day)) PARTITION BY RANGE (day);
	CREATE TABLE events_1 PARTITION OF events FOR VALUES FROM ('2026-01-01') TO ('2026-02-01');
	CREATE TABLE events_2 PARTITION OF events FOR VALUES FROM ('2026-02-01') TO ('2026-03-01');
	CREATE TABLE events_3 (LIKE events INCLUDING ALL);
	ALTER TABLE users REPLICA IDENTITY FULL;
	ALTER TABLE tickets REPLICA IDENTITY FULL;
	ALTER TABLE events REPLICA IDENTITY FULL;
	ALTER TABLE events_1 REPLICA IDENTITY FULL;
	ALTER TABLE events_2 REPLICA IDENTITY FULL;
	INSERT INTO users SELECT i, CASE WHEN i % 3 = 0 THEN 'ADMIN' ELSE 'Agent' END, 'user ' || i FROM generate_series(1, 30) i;
	INSERT INTO tickets SELECT i, 1 + i % 30, (ARRAY['open', 'pending', 'closed'])[1 + i % 3]::ticket_status, i % 5 FROM generate_series(1, 90) i;
	INSERT INTO events SELECT i, DATE '2026-01-01' + i, 'event ' || i FROM generate_series(1, 50) i;
	INSERT INTO events_3 SELECT i, DATE '2026-03-01' + i % 28, 'late ' || i FROM generate_series(100, 119) i`

// deskRows are row changes made after each catalog change, which the
// follow must apply with it.
const deskRows = `UPDATE tickets SET priority = priority + 1 WHERE ticket_id % 7 = 0;
	UPDATE users SET name = name || '!' WHERE user_id % 4 = 0;
	DELETE FROM tickets WHERE ticket_id = 1`

// catalogCase is a change of the catalog, and what a follow does with it.
type catalogCase struct {
	name string
	// sql is the change, made on the source.
	sql func(pub string) string
	// rederived is the entity derived again whole when the follow goes on
	// (""), or stop the text of its stop, then fix what makes the
	// publication whole again (before --resume --prune).
	rederived, stop string
	fix             func(pub string) string
}

func catalogCases() []catalogCase {
	return []catalogCase{
		{name: "row filter", sql: func(pub string) string {
			return `ALTER PUBLICATION ` + pub + ` SET TABLE users, tickets WHERE (priority >= 3), events`
		}, stop: "every row and column of public.tickets (it has a row filter WHERE (priority >= 3))",
			fix: func(pub string) string {
				return `ALTER PUBLICATION ` + pub + ` DROP TABLE tickets; ALTER PUBLICATION ` + pub + ` ADD TABLE tickets`
			}},
		{name: "publish insert", sql: func(pub string) string { return `ALTER PUBLICATION ` + pub + ` SET (publish = 'insert')` },
			stop: "does not publish updates, deletes, truncates",
			fix: func(pub string) string {
				return `ALTER PUBLICATION ` + pub + ` SET (publish = 'insert, update, delete, truncate')`
			}},
		{name: "table dropped from the publication", sql: func(pub string) string { return `ALTER PUBLICATION ` + pub + ` DROP TABLE users` },
			stop: "public.users (taken out of it)",
			fix:  func(pub string) string { return `ALTER PUBLICATION ` + pub + ` ADD TABLE users` }},
		{name: "enum label renamed", sql: func(string) string { return `ALTER TYPE ticket_status RENAME VALUE 'pending' TO 'waiting'` },
			rederived: "Ticket"},
		{name: "column rewritten", sql: func(string) string {
			return `ALTER TABLE users ALTER COLUMN role TYPE varchar(20) USING lower(role)`
		}, rederived: "User, Ticket"},
		{name: "partition attached", sql: func(string) string {
			return `ALTER TABLE events ATTACH PARTITION events_3 FOR VALUES FROM ('2026-03-01') TO ('2026-04-01')`
		}, rederived: "Event"},
		{name: "partition detached", sql: func(string) string { return `ALTER TABLE events DETACH PARTITION events_2` },
			stop: "partitions detached from public.events"},
		// pgoutput sends no TRUNCATE of a partition published via its root.
		{name: "partition truncated", sql: func(string) string { return `TRUNCATE events_1` },
			stop: "the storage of partitions events_1 of public.events was replaced"},
		// A partition's old rows carry its own identity, not its root's.
		{name: "partition's replica identity lowered", sql: func(string) string { return `ALTER TABLE events_2 REPLICA IDENTITY NOTHING` },
			stop: "events_2, a partition of \"public\".\"events\": its replica identity lacks day, event_id",
			fix:  func(string) string { return `ALTER TABLE events_2 REPLICA IDENTITY FULL` }},
	}
}

// TestFollowSeesCatalogChangesWhileStopped makes each change while no
// follow runs, then resumes: a change it derives its way out of is derived
// again before the stream goes on; one it cannot is refused before
// anything is written (exit 2), and its advice, followed, ends in step.
func TestFollowSeesCatalogChangesWhileStopped(t *testing.T) {
	t.Parallel()
	for _, c := range catalogCases() {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			f := loaded(t, filepath.Join("testdata", "desk.yaml"), deskSchema)
			pub := follow.DefaultName(f.table)
			testenv.Exec(t, f.url, c.sql(pub))
			testenv.Exec(t, f.url, deskRows)
			before := scanTable(t, f.endpoint, f.table)
			code, out := f.resume()
			if c.stop == "" {
				want := "deriving every item of " + c.rederived + " again first"
				if code != 0 || !strings.Contains(out, want) {
					t.Fatalf("--resume: exit %d, want 0 and %q\n%s", code, want, out)
				}
				f.inStep(t)
				return
			}
			if code != 2 || !strings.Contains(out, c.stop) || !strings.Contains(out, "while no follow ran") || !strings.Contains(out, "--resume --prune") {
				t.Fatalf("--resume: exit %d, want 2 naming %q and --resume --prune\n%s", code, c.stop, out)
			}
			if after := scanTable(t, f.endpoint, f.table); !slices.Equal(before, after) {
				t.Errorf("the refused resume changed the table: %d items before, %d after", len(before), len(after))
			}
			if c.fix != nil {
				testenv.Exec(t, f.url, c.fix(pub))
			}
			if code, out := f.resume("--prune"); code != 0 {
				t.Fatalf("--resume --prune: exit %d\n%s", code, out)
			}
			f.inStep(t)
		})
	}
}

// A catalog change found at a resume is recorded only once the window that
// derives its entities again is acknowledged: a resume whose writes the
// table refuses in that window leaves it unrecorded, and the next resume
// derives them again and ends in step.
func TestCatalogChangeOutlivesAFailedRederive(t *testing.T) {
	t.Parallel()
	f := loaded(t, filepath.Join("testdata", "desk.yaml"), deskSchema)
	testenv.Exec(t, f.url, `ALTER TYPE ticket_status RENAME VALUE 'pending' TO 'waiting'`)
	proxy, err := faultproxy.Start(f.endpoint, faultproxy.Rates{Permanent: "AccessDeniedException", Only: []string{"BatchWriteItem"}}, 1)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(proxy.Close)
	const want = "deriving every item of Ticket again first"
	if code, out := f.resume("--endpoint-url", proxy.URL); code == 0 || !strings.Contains(out, want) {
		t.Fatalf("--resume, its writes refused: exit %d, want a failure after %q\n%s", code, want, out)
	}
	if code, out := f.resume(); code != 0 || !strings.Contains(out, want) {
		t.Fatalf("--resume again: exit %d, want 0 and %q again\n%s", code, want, out)
	}
	f.inStep(t)
}

// TestFollowSeesCatalogChangesWhileStreaming makes each change while the
// follow streams, with DDL capture (the event trigger: the follow meets
// the command in the stream) and without it (--no-ddl-capture: its
// catalog checks find it): it derives the entities again and goes on, or
// stops naming the change (exit 1), and its advice ends in step.
func TestFollowSeesCatalogChangesWhileStreaming(t *testing.T) {
	t.Parallel()
	// Every case with DDL capture; without it (the catalog checks alone),
	// one of each kind: a publication narrowed, a change derived again, a
	// change that stops the follow.
	fallback := []string{"row filter", "enum label renamed", "partition detached", "partition truncated"}
	for _, c := range catalogCases() {
		for _, capture := range []bool{true, false} {
			if !capture && !slices.Contains(fallback, c.name) {
				continue
			}
			name := c.name + map[bool]string{true: ", DDL capture", false: ", catalog checks"}[capture]
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				var extra []string
				if !capture {
					extra = []string{"--no-ddl-capture"}
				}
				f := followChangesWith(t, filepath.Join("testdata", "desk.yaml"), deskSchema, extra)
				if f.code != 0 {
					t.Fatalf("migrate --follow --resume: exit %d\n%s", f.code, f.out)
				}
				if want := map[bool]string{true: "DDL capture on", false: "DDL capture off"}[capture]; !strings.Contains(f.loadOut, want) {
					t.Fatalf("the follow did not say %q at start:\n%s", want, f.loadOut)
				}
				pub := follow.DefaultName(f.table)
				p := startFollow(t, liveArgs(f)...)
				p.waitFor(t, following, "the follow to start")
				testenv.Exec(t, f.url, c.sql(pub))
				testenv.Exec(t, f.url, deskRows)
				if c.stop == "" {
					p.waitFor(t, regexp.MustCompile(`deriving every item of `+regexp.QuoteMeta(c.rederived)+` again`), c.rederived+" derived again")
					p.waitFor(t, regexp.MustCompile(`follow: applied [0-9A-F/]+: \d+ transactions, [1-9]\d* changes`), "the row changes applied")
					p.cmd.Process.Signal(syscall.SIGINT)
					if code := p.exit(t); code != 0 {
						t.Fatalf("exit %d after SIGINT\n%s", code, p.out.String())
					}
					// The changes after the catalog's may still be in the
					// slot: the resume applies them.
					if code, out := f.resume(); code != 0 {
						t.Fatalf("--resume: exit %d\n%s", code, out)
					}
					f.inStep(t)
					return
				}
				code := p.exit(t)
				out := p.out.String()
				if code != 1 || !strings.Contains(out, c.stop) || !strings.Contains(out, "--resume --prune") {
					t.Fatalf("exit %d, want 1 naming %q and --resume --prune\n%s", code, c.stop, firstLines(out, 60))
				}
				if c.fix != nil {
					testenv.Exec(t, f.url, c.fix(pub))
				}
				if code, out := f.resume("--prune"); code != 0 {
					t.Fatalf("--resume --prune: exit %d\n%s", code, out)
				}
				f.inStep(t)
			})
		}
	}
}

// A publication narrowed and restored while no follow ran, with rows
// changed in between: the catalog is as it was, but the changes made
// while it was narrowed never reached the slot. DDL capture recorded the
// narrowing where it happened, so the resume stops there, naming it, and
// --resume --prune ends in step.
func TestFollowSeesAPublicationNarrowedAndRestored(t *testing.T) {
	t.Parallel()
	f := loaded(t, filepath.Join("testdata", "desk.yaml"), deskSchema)
	pub := follow.DefaultName(f.table)
	testenv.Exec(t, f.url, fmt.Sprintf(`ALTER PUBLICATION %s SET (publish = 'insert')`, pub))
	testenv.Exec(t, f.url, deskRows)
	testenv.Exec(t, f.url, fmt.Sprintf(`ALTER PUBLICATION %s SET (publish = 'insert, update, delete, truncate')`, pub))
	code, out := f.resume()
	if code != 1 || !strings.Contains(out, "does not publish updates, deletes, truncates by ALTER PUBLICATION") || !strings.Contains(out, "--resume --prune") {
		t.Fatalf("--resume: exit %d, want 1 naming the narrowing and --resume --prune\n%s", code, out)
	}
	if code, out := f.resume("--prune"); code != 0 {
		t.Fatalf("--resume --prune: exit %d\n%s", code, out)
	}
	f.inStep(t)
}

// Rows changed while their enum column held a label, the label renamed
// after, both while no follow ran: the resumed follow reads the old row
// images, which hold the old label, and derives the entity again for the
// rename; it exits 0 in step (before, casting the old label to the
// renamed enum failed every resume).
func TestFollowReadsImagesOfARenamedEnumLabel(t *testing.T) {
	t.Parallel()
	f := loaded(t, filepath.Join("testdata", "notes-whole.yaml"), auditSchema)
	testenv.Exec(t, f.url, `UPDATE notes SET body = body || ' edited', owner = 'o9' WHERE status = 'pending'`)
	testenv.Exec(t, f.url, `ALTER TYPE note_status RENAME VALUE 'pending' TO 'waiting'`)
	if code, out := f.resume(); code != 0 {
		t.Fatalf("--resume: exit %d, want 0\n%s", code, out)
	}
	f.inStep(t)
}

// A first follow whose full load is cut short (the table refuses writes
// after its fifth BatchWriteItem) records the catalog its items were
// derived with: a change made before the resume is found then, as after
// a whole load. An enum label renamed, which no event trigger streams
// (--no-ddl-capture), is derived again; the publication dropped is
// refused before anything is written, and its advice ends in step.
func TestCatalogChangeAfterACutShortLoad(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, sql, want string
		code            int
	}{
		{"enum label renamed", `ALTER TYPE ticket_status RENAME VALUE 'pending' TO 'waiting'`, "deriving every item of Ticket again first", 0},
		{"publication dropped", `DROP PUBLICATION %s`, "while no follow ran", 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			f := followedChange{endpoint: ownDynalite(t), url: logicalDatabase(t), mapping: filepath.Join("testdata", "desk.yaml")}
			testenv.Exec(t, f.url, deskSchema)
			f.table = testenv.TableName("desk-cut")
			dir := t.TempDir()
			f.args = []string{"migrate", "--mapping", f.mapping, "--source", f.url, "--endpoint-url", f.endpoint, "--table", f.table,
				"--follow", "--until-caught-up", "--progress", "none", "--no-ddl-capture",
				"--rejects", filepath.Join(dir, "rejects.jsonl"), "--checkpoint", filepath.Join(dir, "checkpoint.json")}
			t.Cleanup(func() {
				run(context.Background(), "drop-slot", "--mapping", f.mapping, "--source", f.url, "--table", f.table)
			})
			proxy, err := faultproxy.Start(f.endpoint, faultproxy.Rates{Permanent: "AccessDeniedException", PermanentAfter: 5, Only: []string{"BatchWriteItem"}}, 1)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(proxy.Close)
			first := append(slices.Clone(f.args), "--create-table", "--endpoint-url", proxy.URL)
			if code, out := run(context.Background(), first...); code != 1 || strings.Contains(out, "following slot") {
				t.Fatalf("migrate --follow, writes refused after the fifth request: exit %d, want 1 in the full load\n%s", code, out)
			}
			if n := len(scanTable(t, f.endpoint, f.table)); n == 0 {
				t.Fatal("the cut-short load wrote nothing: it must have written items derived with the catalog before the change")
			}
			sql := c.sql
			if strings.Contains(sql, "%s") {
				sql = fmt.Sprintf(sql, follow.DefaultName(f.table))
			}
			testenv.Exec(t, f.url, sql)
			code, out := f.resume()
			if code != c.code || !strings.Contains(out, c.want) {
				t.Fatalf("--resume: exit %d, want %d and %q\n%s", code, c.code, c.want, out)
			}
			if code != 0 {
				f.loadAgain(t)
			}
			f.inStep(t)
		})
	}
}
