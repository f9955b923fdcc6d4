package plan

import (
	"testing"

	"github.com/pg2dynamo/pg2dynamo/tools/testenv/prepare"
)

// TestJoinNotes: plan says what every join rule of the strategy fixtures
// (which use every kind of mapping.JoinKinds) writes; a kind without a
// note fails here.
func TestJoinNotes(t *testing.T) {
	for _, st := range prepare.Strategies(t) {
		for _, e := range st.Mapping.Entities {
			for _, j := range e.Joins() {
				if joinNote(j) == "" {
					t.Errorf("%s: no note for kind %s", j.Path, j.Kind)
				}
			}
		}
	}
}
