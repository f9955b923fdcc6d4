package follow

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/pg2dynamo/pg2dynamo/fixtures"
	"github.com/pg2dynamo/pg2dynamo/internal/testenv"
	"github.com/pg2dynamo/pg2dynamo/internal/testenv/prepare"
	"github.com/pg2dynamo/pg2dynamo/mapping"
)

// TestGraphFollowsEveryJoin: for every join rule of the strategy
// fixtures' mappings (which use every kind of mapping.JoinKinds), the
// graph holds a dependency of its source's table on the entity: a parent
// for a rule whose rows are parents, a child for the others, on the
// rule's join columns. A kind that NewGraph does not follow (a change of
// its source would silently leave the items as they were) fails here.
func TestGraphFollowsEveryJoin(t *testing.T) {
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
		domain := strings.TrimSuffix(filepath.Base(file), ".yaml")
		t.Run(domain, func(t *testing.T) {
			ddl, err := fixtures.Schema(domain)
			if err != nil {
				t.Fatal(err)
			}
			url := testenv.NewDatabase(t)
			testenv.Exec(t, url, ddl)
			m, err := mapping.Load(file)
			if err != nil {
				t.Fatal(err)
			}
			_, plans := prepare.Source(t, url, m)
			g, err := NewGraph(context.Background(), testenv.Connect(t, url), m, plans)
			if err != nil {
				t.Fatal(err)
			}
			for i, e := range m.Entities {
				for _, r := range e.Joins() {
					kinds[r.Kind] = true
					want := effect{kind: child, entity: i, path: r.SourcePath(), on: r.On.Pairs()}
					if r.Parent {
						want.kind = parent
					}
					found := false
					for _, tb := range g.tables {
						found = found || slices.ContainsFunc(tb.effects, func(e effect) bool {
							return e.kind == want.kind && e.entity == want.entity && e.path == want.path && slices.Equal(e.on, want.on)
						})
					}
					if !found {
						t.Errorf("%s: no dependency %+v in the graph", r.Path, want)
					}
				}
			}
		})
	}
	for _, k := range mapping.JoinKinds {
		if !kinds[k] && !t.Failed() {
			t.Errorf("no strategy fixture has a rule of kind %s: fixtures/mappings/strategies/ is to use every kind", k)
		}
	}
}
