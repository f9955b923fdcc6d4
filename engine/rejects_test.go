package engine

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/pg2dynamo/pg2dynamo/pipeline"
)

// A resumed run appends to the rejects file without listing a row twice:
// rows the earlier run listed absorb one reject each (by entity and source
// key, whatever the reason), and a last line cut short by a kill is
// dropped, its row listed anew.
func TestRejectsListedOnceOnResume(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rejects.jsonl")
	earlier := `{"entity":"A","source_key":{"id":"1"},"reason":"NULL in key attribute PK"}
{"entity":"B","source_key":{"id":"2","x":null},"reason":"duplicate primary key: an earlier row"}
{"entity":"A","source_key":{"id":"3"},"rea`
	if err := os.WriteFile(path, []byte(earlier), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := createRejects(path, true)
	if err != nil {
		t.Fatal(err)
	}
	for _, rej := range []pipeline.Reject{
		{Entity: "A", SourceKey: map[string]any{"id": "1"}, Reason: "NULL in key attribute PK"},               // listed
		{Entity: "B", SourceKey: map[string]any{"x": nil, "id": "2"}, Reason: "duplicate primary key: other"}, // listed, other reason
		{Entity: "A", SourceKey: map[string]any{"id": "3"}, Reason: "cut short"},                              // its line was cut
		{Entity: "A", SourceKey: map[string]any{"id": "1"}, Reason: "again"},                                  // a second time
		{Entity: "B", SourceKey: map[string]any{"id": "1"}, Reason: "new"},
	} {
		if err := r.Write(rej); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, rej := range readRejects(t, path) {
		got = append(got, fmt.Sprintf("%s %v: %s", rej.Entity, rej.SourceKey["id"], rej.Reason))
	}
	want := []string{
		"A 1: NULL in key attribute PK",
		"B 2: duplicate primary key: an earlier row",
		"A 3: cut short",
		"A 1: again",
		"B 1: new",
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("rejects file (-want +got):\n%s", d)
	}
}

func readRejects(t *testing.T, path string) []pipeline.Reject {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []pipeline.Reject
	for _, line := range bytes.Split(bytes.TrimSpace(b), []byte("\n")) {
		var r pipeline.Reject
		if err := json.Unmarshal(line, &r); err != nil {
			t.Fatalf("rejects line %q: %v", line, err)
		}
		out = append(out, r)
	}
	return out
}
