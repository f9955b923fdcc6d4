package engine_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/pg2dynamo/pg2dynamo/engine"
	"github.com/pg2dynamo/pg2dynamo/pipeline"
	"github.com/pg2dynamo/pg2dynamo/plan"
	"github.com/pg2dynamo/pg2dynamo/tools/testenv"
)

// Migrate refuses options that do not go together before it opens
// anything (here the mapping, the source and DynamoDB are nowhere), with
// KindRefused, an *OptionError naming the options' fields, refused one
// first, and the reason worded through Config.Naming (nil: the fields).
func TestMigrateRefusesOptionsThatDoNotGoTogether(t *testing.T) {
	shard := pipeline.Shard{Index: 1, Count: 2}
	for _, tc := range []struct {
		o    engine.MigrateOptions
		opts []engine.Option
		says string
	}{
		{engine.MigrateOptions{LoadOptions: engine.LoadOptions{Shard: shard}, Follow: true},
			[]engine.Option{engine.OptShard, engine.OptFollow}, "Shard with Follow: one follow keeps the whole table in step"},
		{engine.MigrateOptions{Prune: true, NoVerify: true}, []engine.Option{engine.OptPrune, engine.OptNoVerify}, "Prune with NoVerify"},
		{engine.MigrateOptions{Prune: true, DryRun: true}, []engine.Option{engine.OptPrune, engine.OptDryRun}, "Prune with DryRun"},
		{engine.MigrateOptions{Prune: true, LoadOptions: engine.LoadOptions{Shard: shard}}, []engine.Option{engine.OptPrune, engine.OptShard}, "Prune with Shard"},
		{engine.MigrateOptions{Prune: true, WriteOptions: engine.WriteOptions{Sink: "null"}}, []engine.Option{engine.OptPrune, engine.OptSink}, "Prune needs Sink dynamodb"},
		{engine.MigrateOptions{ChangesOnly: true, Prune: true}, []engine.Option{engine.OptChangesOnly, engine.OptPrune}, "ChangesOnly with Prune"},
		{engine.MigrateOptions{ChangesOnly: true, Resume: true}, []engine.Option{engine.OptChangesOnly, engine.OptResume}, "ChangesOnly with Resume"},
		{engine.MigrateOptions{EvolveOptions: engine.EvolveOptions{DropGSIs: true}}, []engine.Option{engine.OptDropGSIs, engine.OptPreviousMapping}, "DropGSIs needs PreviousMapping"},
	} {
		t.Run(tc.says, func(t *testing.T) {
			cfg := engine.Config{Mapping: "nowhere.yaml", Source: "postgres://nobody@127.0.0.1:1/none"}
			err := engine.Migrate(context.Background(), cfg, tc.o)
			if kind, _ := engine.KindOf(err); kind != engine.KindRefused || err == nil || !strings.Contains(err.Error(), tc.says) {
				t.Errorf("Migrate: %v (kind %v), want refused saying %q", err, kind, tc.says)
			}
			var oe *engine.OptionError
			if !errors.As(err, &oe) || !slices.Equal(oe.Options, tc.opts) {
				t.Errorf("Migrate: %#v, want an *OptionError of %v", err, tc.opts)
			}
		})
	}
}

// Config.Naming words the options an error names: a caller's own words
// for them (a command line's flags) replace the fields' names throughout.
func TestOptionErrorsUseTheCallersNaming(t *testing.T) {
	cfg := engine.Config{Mapping: "nowhere.yaml", Naming: func(o engine.Option) string { return "<" + string(o) + ">" }}
	err := engine.Migrate(context.Background(), cfg, engine.MigrateOptions{ChangesOnly: true, Prune: true})
	want := "<ChangesOnly> with <Prune>: <ChangesOnly> deletes the stale items itself, each conditional on its type as <Prune> does; leave out <Prune>"
	if err == nil || err.Error() != want {
		t.Errorf("Migrate: %v, want %q", err, want)
	}
}

// plan --previous-mapping writes text or markdown: another format, the
// OneTable schema included, is an option error, not a plan of one version.
func TestPlanOfTwoVersionsRefusesOtherFormats(t *testing.T) {
	dir := t.TempDir()
	m := filepath.Join(dir, "m.yaml")
	testenv.WriteFile(t, m, "name: shop\ntable: {name: shop}\nentities:\n  C: {source: {table: c}, pk: \"C#${id}\", sk: C}\n", 0o600)
	for _, format := range []string{plan.FormatJSON, plan.FormatOneTable} {
		var out bytes.Buffer
		err := engine.Plan(context.Background(), engine.Config{Mapping: m, Out: &out, Log: io.Discard}, engine.PlanOptions{Format: format, PreviousMapping: m})
		var oe *engine.OptionError
		if !errors.As(err, &oe) || oe.Options[0] != engine.OptPreviousMapping || out.Len() > 0 {
			t.Errorf("format %s with PreviousMapping: %v, wrote %d bytes; want an *OptionError of PreviousMapping and nothing written", format, err, out.Len())
		}
	}
}
