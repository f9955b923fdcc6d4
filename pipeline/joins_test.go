package pipeline_test

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/pg2dynamo/pg2dynamo/extract"
	"github.com/pg2dynamo/pg2dynamo/fixtures"
	"github.com/pg2dynamo/pg2dynamo/internal/testenv"
	"github.com/pg2dynamo/pg2dynamo/internal/testenv/prepare"
	"github.com/pg2dynamo/pg2dynamo/mapping"
)

// TestPrepareDescribesEveryJoin: for every join rule of the strategy
// fixtures' mappings (which use every kind of mapping.JoinKinds), Prepare
// describes its source and the plan reads it as one join, in
// mapping.Entity.Joins order, on its join columns. A kind whose source
// Prepare leaves undescribed (transform.Sources.SetJoin), or that
// transform does not compile, fails here.
func TestPrepareDescribesEveryJoin(t *testing.T) {
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
			for i, e := range m.Entities {
				joins := plans[i].Query().Joins
				rules := e.Joins()
				if len(joins) != len(rules) {
					t.Errorf("%s: %d joins read of %d rules", e.Name, len(joins), len(rules))
					continue
				}
				for k, r := range rules {
					kinds[r.Kind] = true
					j := joins[k]
					if j.Source != r.Source || !slices.Equal(j.On, r.On.Pairs()) || (j.Kind == extract.JoinParent) != r.Parent {
						t.Errorf("%s: join %d reads %v on %v (kind %v); want the rule's %v on %v (parent %v)", r.Path, k, j.Source, j.On, j.Kind, r.Source, r.On.Pairs(), r.Parent)
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
