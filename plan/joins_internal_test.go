package plan

import (
	"path/filepath"
	"testing"

	"github.com/pg2dynamo/pg2dynamo/internal/testenv"
	"github.com/pg2dynamo/pg2dynamo/mapping"
)

// TestJoinNotes: plan says what every join rule of the strategy fixtures
// (which use every kind of mapping.JoinKinds) writes; a kind without a
// note fails here.
func TestJoinNotes(t *testing.T) {
	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob(filepath.Join(root, "fixtures", "mappings", "strategies", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("strategy fixtures: %v, %v", files, err)
	}
	kinds := map[mapping.JoinKind]bool{}
	for _, file := range files {
		m, err := mapping.Load(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range m.Entities {
			for _, j := range e.Joins() {
				kinds[j.Kind] = true
				if joinNote(j) == "" {
					t.Errorf("%s: no note for kind %s", j.Path, j.Kind)
				}
			}
		}
	}
	for _, k := range mapping.JoinKinds {
		if !kinds[k] {
			t.Errorf("no strategy fixture has a rule of kind %s: fixtures/mappings/strategies/ is to use every kind", k)
		}
	}
}
