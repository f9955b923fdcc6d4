package prepare

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/pg2dynamo/pg2dynamo/extract"
	"github.com/pg2dynamo/pg2dynamo/fixtures"
	"github.com/pg2dynamo/pg2dynamo/mapping"
	"github.com/pg2dynamo/pg2dynamo/tools/testenv"
	"github.com/pg2dynamo/pg2dynamo/transform"
)

// Strategy is a fixtures/mappings/strategies/ domain with its loaded mapping.
type Strategy struct {
	Domain  string
	Mapping *mapping.Mapping
}

// Strategies loads fixtures/mappings/strategies/, which together use every
// mapping.JoinKinds kind, so per-kind stage tests range over them; t fails when
// none exist or a kind is unused.
func Strategies(t testing.TB) []Strategy {
	t.Helper()
	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob(filepath.Join(root, "fixtures", "mappings", "strategies", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("strategy fixtures: %v, %v", files, err)
	}
	var out []Strategy
	kinds := map[mapping.JoinKind]bool{}
	for _, file := range files {
		m, err := mapping.Load(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range m.Entities {
			for _, r := range e.Joins() {
				kinds[r.Kind] = true
			}
		}
		out = append(out, Strategy{Domain: strings.TrimSuffix(filepath.Base(file), ".yaml"), Mapping: m})
	}
	for _, k := range mapping.JoinKinds {
		if !kinds[k] {
			t.Errorf("no strategy fixture has a rule of kind %s: fixtures/mappings/strategies/ is to use every kind", k)
		}
	}
	return out
}

// Source creates a database with s's schema (no rows), prepares s.Mapping
// against it and returns its URL too.
func (s Strategy) Source(t testing.TB) (string, *extract.Source, []*transform.Plan) {
	t.Helper()
	ddl, err := fixtures.Schema(s.Domain)
	if err != nil {
		t.Fatal(err)
	}
	url := testenv.NewDatabase(t)
	testenv.Exec(t, url, ddl)
	src, plans := Source(t, url, s.Mapping)
	return url, src, plans
}
