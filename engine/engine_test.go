package engine_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pg2dynamo/pg2dynamo/engine"
	"github.com/pg2dynamo/pg2dynamo/report"
	"github.com/pg2dynamo/pg2dynamo/tools/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

const notesMapping = `version: 1
name: notes
table: {name: notes}
entities:
  Note:
    source: {table: notes}
    pk: OWNER#${owner}
    sk: NOTE#${note_id}
`

// notes is a fixture of a new database of 20 notes, one of them (7) with
// a NULL owner (a reject: its key needs the owner), and notesMapping.
func notes(t *testing.T) *fixture {
	return newFixture(t, `CREATE TABLE notes (note_id int PRIMARY KEY, owner text, body text);
		INSERT INTO notes SELECT i, 'o' || (i % 3), 'note ' || i FROM generate_series(1, 20) i;
		UPDATE notes SET owner = NULL WHERE note_id = 7`, notesMapping)
}

// The engine driven as a library, without the command line: a migration
// with its check, a comparison that finds a planted item (KindMismatch),
// a run refused before it writes (KindRefused), and a reject
// (KindRejected) listed in the rejects file with its whole item key.
func TestEngineAsALibrary(t *testing.T) {
	ctx := context.Background()
	f := notes(t)
	cfg, dir, log, out, opts := f.cfg, f.dir, f.log, f.out, f.options()

	s, err := engine.Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(s.Plans()); n != 1 || s.Mapping().Table.Name != cfg.Table || s.MappingSHA256() == "" {
		t.Errorf("Open: %d plans, table %s, SHA-256 %q; want 1, %s and the file's", n, s.Mapping().Table.Name, s.MappingSHA256(), cfg.Table)
	}
	s.Close(ctx)

	err = engine.Migrate(ctx, cfg, opts)
	if kind, ok := engine.KindOf(err); !ok || kind != engine.KindRejected {
		t.Fatalf("Migrate: %v (kind %v), want KindRejected for the note without an owner\n%s%s", err, kind, log.String(), out.String())
	}
	if !strings.Contains(out.String(), "verify PASSED") {
		t.Errorf("Migrate's check did not pass:\n%s", out.String())
	}
	rejects := testenv.ReadFile(t, opts.Rejects)
	if want := `"source_key":{"note_id":"7","owner":null}`; !strings.Contains(rejects, want) {
		t.Errorf("rejects file %s lacks %s", rejects, want)
	}

	f.put("PK", "OWNER#x", "SK", "NOTE#99", "type", "Note")
	out.Reset()
	err = engine.Compare(ctx, cfg, engine.CompareOptions{Mode: report.ModeVerify, ReportOptions: opts.ReportOptions})
	if kind, _ := engine.KindOf(err); kind != engine.KindMismatch || !strings.Contains(out.String(), "1 stale") {
		t.Errorf("Compare with a planted item: %v (kind %v), want KindMismatch and 1 stale\n%s", err, kind, out.String())
	}

	// Another mapping (another name), same table: refused before
	// anything is written.
	other := filepath.Join(dir, "other.yaml")
	testenv.WriteFile(t, other, strings.NewReplacer("Note:", "Memo:", "name: notes\n", "name: memos\n").Replace(notesMapping), 0o600)
	cfgOther := cfg
	cfgOther.Mapping = other
	opts.Checkpoint, opts.Rejects = filepath.Join(dir, "other-checkpoint.json"), filepath.Join(dir, "other-rejects.jsonl")
	err = engine.Migrate(ctx, cfgOther, opts)
	if kind, _ := engine.KindOf(err); kind != engine.KindRefused || !strings.Contains(err.Error(), "belongs to mapping notes") {
		t.Errorf("Migrate into another mapping's table: %v (kind %v), want KindRefused naming the owner", err, kind)
	}
	if n := len(f.keys()); n != 20 { // 19 notes and the planted one
		t.Errorf("%d items after the refused run, want 20: it wrote", n)
	}
}
