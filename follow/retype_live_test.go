package follow_test

import (
	"context"
	"path/filepath"
	"regexp"
	"syscall"
	"testing"

	"github.com/pg2dynamo/pg2dynamo/fixtures"
	"github.com/pg2dynamo/pg2dynamo/tools/testenv"
)

// loadedTickets is a followed table of the tickets fixtures at scale 0.1
// (2 orgs, 200 users, 2,000 tickets) with the strategies mapping, whose
// users and tickets duplicate their org's name, every table with REPLICA
// IDENTITY FULL; loaded and caught up, as loaded does.
func loadedTickets(t *testing.T) followedChange {
	t.Helper()
	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	f := followSetup(t, filepath.Join(root, "fixtures", "mappings", "strategies", "tickets.yaml"), func(url string) {
		if _, err := fixtures.Load(context.Background(), testenv.Connect(t, url), "tickets", 0.1, 1); err != nil {
			t.Fatal(err)
		}
		testenv.Exec(t, url, `ALTER TABLE orgs REPLICA IDENTITY FULL; ALTER TABLE users REPLICA IDENTITY FULL; ALTER TABLE tickets REPLICA IDENTITY FULL`)
	}, nil)
	if f.code != 0 {
		t.Fatalf("migrate --follow --resume: exit %d\n%s", f.code, f.out)
	}
	return f
}

// retypeOrgName retypes orgs.name, which the items of User and Ticket
// duplicate: the text of the statements that read it stays the same (text
// and varchar are read alike), their result type does not.
const retypeOrgName = `ALTER TABLE orgs ALTER COLUMN name TYPE varchar(200)`

// changesAfterRetype rename an org (its users' and tickets' items
// duplicate the name), rename a user, and move a user to the other org:
// three changes, one a transaction.
var changesAfterRetype = []string{
	`UPDATE orgs SET name = name || ' renamed' WHERE org_id = 1`,
	`UPDATE users SET name = name || ' renamed' WHERE user_id = 3`,
	`UPDATE users SET org_id = 2 WHERE user_id = 4`,
}

// A column that other entities duplicate retyped while the follow
// streams (orgs.name, text to varchar(200), then to varchar(300): the
// same type, another modifier, then to COLLATE "C"), orgs and users
// changed before and after each retype:
// the follow adapts (the entities whose items read the column are derived
// again, with statements prepared again), applies the changes, stops
// cleanly at SIGINT, and the table equals a full load of the final
// source. The follow's statements prepared before the retype have the
// same text after it: were they not dropped, reading users would fail
// with "cached plan must not change result type" (exit 1).
func TestLiveFollowRetypeDuplicatedColumn(t *testing.T) {
	t.Parallel()
	f := loadedTickets(t)
	p := startFollow(t, liveArgs(f)...)
	p.waitFor(t, following, "the follow to start")
	// The same changes before the retype: the follow prepares the
	// statements that read them.
	for _, sql := range changesAfterRetype {
		testenv.Exec(t, f.url, sql)
	}
	p.waitFor(t, appliedChanges(len(changesAfterRetype)), "the changes before the retype applied")
	testenv.Exec(t, f.url, retypeOrgName)
	for _, sql := range changesAfterRetype {
		testenv.Exec(t, f.url, sql)
	}
	p.waitFor(t, regexp.MustCompile(`derived every item of .*User.* again`), "User derived again")
	p.waitFor(t, appliedChanges(2*len(changesAfterRetype)), "the changes after the retype applied")
	// Retyped within its type: the same type OID, another modifier.
	testenv.Exec(t, f.url, `ALTER TABLE orgs ALTER COLUMN name TYPE varchar(300)`)
	for _, sql := range changesAfterRetype {
		testenv.Exec(t, f.url, sql)
	}
	p.waitFor(t, appliedChanges(3*len(changesAfterRetype)), "the changes after the second retype applied")
	// Another collation: the same type and modifier, which the stream's
	// description of the table does not show.
	testenv.Exec(t, f.url, `ALTER TABLE orgs ALTER COLUMN name TYPE varchar(300) COLLATE "C"`)
	for _, sql := range changesAfterRetype {
		testenv.Exec(t, f.url, sql)
	}
	p.waitFor(t, appliedChanges(4*len(changesAfterRetype)), "the changes after the change of collation applied")
	p.cmd.Process.Signal(syscall.SIGINT)
	if code := p.exit(t); code != 0 {
		t.Fatalf("exit %d after SIGINT, want 0\n%s", code, p.out.String())
	}
	f.inStep(t)
}

// The same retype while no follow runs, with changes before and after
// it: --follow --resume derives the entities that read the column again
// and applies the changes; the table equals a full load of the final
// source. (A new process prepares its statements after the retype: this
// one guards the resume's adapting, not the statements.)
func TestResumeAfterRetypeDuplicatedColumn(t *testing.T) {
	t.Parallel()
	f := loadedTickets(t)
	testenv.Exec(t, f.url, `UPDATE orgs SET name = name || ' before' WHERE org_id = 2`)
	testenv.Exec(t, f.url, retypeOrgName)
	for _, sql := range changesAfterRetype {
		testenv.Exec(t, f.url, sql)
	}
	code, out := f.resume()
	if code != 0 {
		t.Fatalf("--follow --resume after the retype: exit %d, want 0\n%s", code, out)
	}
	f.inStep(t)
}
