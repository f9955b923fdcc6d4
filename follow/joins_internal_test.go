package follow

import (
	"context"
	"slices"
	"testing"

	"github.com/pg2dynamo/pg2dynamo/tools/testenv"
	"github.com/pg2dynamo/pg2dynamo/tools/testenv/prepare"
)

// TestGraphFollowsEveryJoin: for every join rule of the strategy
// fixtures' mappings (which use every kind of mapping.JoinKinds), the
// graph holds a dependency of its source's table on the entity: a parent
// for a rule whose rows are parents, a child for the others, on the
// rule's join columns. A kind that NewGraph does not follow (a change of
// its source would silently leave the items as they were) fails here.
func TestGraphFollowsEveryJoin(t *testing.T) {
	for _, st := range prepare.Strategies(t) {
		t.Run(st.Domain, func(t *testing.T) {
			m := st.Mapping
			url, _, plans := st.Source(t)
			g, err := NewGraph(context.Background(), testenv.Connect(t, url), m, plans)
			if err != nil {
				t.Fatal(err)
			}
			for i, e := range m.Entities {
				for _, r := range e.Joins() {
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
}
