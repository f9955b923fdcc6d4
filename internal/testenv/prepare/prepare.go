// Package prepare is the set-up of the tests that run a stage after
// extract on a real source: a mapping parsed, the source connected, the
// mapping checked and compiled against it (pipeline.Prepare), and the
// snapshot begun. It is apart from testenv, which the pipeline's own
// internal tests import, because it imports pipeline.
package prepare

import (
	"context"
	"testing"

	"github.com/pg2dynamo/pg2dynamo/extract"
	"github.com/pg2dynamo/pg2dynamo/mapping"
	"github.com/pg2dynamo/pg2dynamo/pipeline"
	"github.com/pg2dynamo/pg2dynamo/transform"
)

// Mapping parses yaml as the mapping file name (mapping.Parse), failing
// t on an error.
func Mapping(t testing.TB, name, yaml string) *mapping.Mapping {
	t.Helper()
	m, err := mapping.Parse(name, []byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// Source connects to the database at url, checks and compiles m against
// it (pipeline.Prepare) and begins the snapshot the stages read, failing
// t on an error. The source is closed when t ends.
func Source(t testing.TB, url string, m *mapping.Mapping) (*extract.Source, []*transform.Plan) {
	t.Helper()
	ctx := context.Background()
	src, err := extract.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { src.Close(context.Background()) })
	plans, err := pipeline.Prepare(ctx, src, m)
	if err != nil {
		t.Fatal(err)
	}
	if err := src.Begin(ctx); err != nil {
		t.Fatal(err)
	}
	return src, plans
}
