// Package prepare sets up tests running a stage after extract on a real source:
// mapping parsed, source connected, mapping checked and compiled
// (pipeline.Prepare), snapshot begun. It imports pipeline, so it is apart from
// testenv.
package prepare

import (
	"context"
	"testing"

	"github.com/pg2dynamo/pg2dynamo/extract"
	"github.com/pg2dynamo/pg2dynamo/mapping"
	"github.com/pg2dynamo/pg2dynamo/pipeline"
	"github.com/pg2dynamo/pg2dynamo/transform"
)

// Mapping parses yaml as mapping file name, failing t on an error.
func Mapping(t testing.TB, name, yaml string) *mapping.Mapping {
	t.Helper()
	m, err := mapping.Parse(name, []byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// Source connects to url, prepares m (pipeline.Prepare) and begins the
// snapshot, failing t on an error; closed when t ends.
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
