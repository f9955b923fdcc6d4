package pipeline_test

import (
	"slices"
	"testing"

	"github.com/pg2dynamo/pg2dynamo/extract"
	"github.com/pg2dynamo/pg2dynamo/tools/testenv/prepare"
)

// TestPrepareDescribesEveryJoin: for every join rule of the strategy
// fixtures' mappings (which use every kind of mapping.JoinKinds), Prepare
// describes its source and the plan reads it as one join, in
// mapping.Entity.Joins order, on its join columns. A kind whose source
// Prepare leaves undescribed (transform.Sources.SetJoin), or that
// transform does not compile, fails here.
func TestPrepareDescribesEveryJoin(t *testing.T) {
	for _, st := range prepare.Strategies(t) {
		t.Run(st.Domain, func(t *testing.T) {
			m := st.Mapping
			_, _, plans := st.Source(t)
			for i, e := range m.Entities {
				joins := plans[i].Query().Joins
				rules := e.Joins()
				if len(joins) != len(rules) {
					t.Errorf("%s: %d joins read of %d rules", e.Name, len(joins), len(rules))
					continue
				}
				for k, r := range rules {
					j := joins[k]
					if j.Source != r.Source || !slices.Equal(j.On, r.On.Pairs()) || (j.Kind == extract.JoinParent) != r.Parent {
						t.Errorf("%s: join %d reads %v on %v (kind %v); want the rule's %v on %v (parent %v)", r.Path, k, j.Source, j.On, j.Kind, r.Source, r.On.Pairs(), r.Parent)
					}
				}
			}
		})
	}
}
