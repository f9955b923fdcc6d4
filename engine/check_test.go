package engine_test

import (
	"context"
	"strings"
	"testing"

	"github.com/pg2dynamo/pg2dynamo/engine"
	"github.com/pg2dynamo/pg2dynamo/pipeline"
)

// Migrate refuses options that do not go together before it opens
// anything (here the mapping, the source and DynamoDB are nowhere), with
// KindRefused and the reason.
func TestMigrateRefusesOptionsThatDoNotGoTogether(t *testing.T) {
	shard := pipeline.Shard{Index: 1, Count: 2}
	for _, tc := range []struct {
		o    engine.MigrateOptions
		says string
	}{
		{engine.MigrateOptions{LoadOptions: engine.LoadOptions{Shard: shard}, Follow: true}, "--shard with --follow: one follow keeps the whole table in step"},
		{engine.MigrateOptions{Prune: true, NoVerify: true}, "--prune with --no-verify"},
		{engine.MigrateOptions{Prune: true, DryRun: true}, "--prune with --dry-run"},
		{engine.MigrateOptions{Prune: true, LoadOptions: engine.LoadOptions{Shard: shard}}, "--prune with --shard"},
		{engine.MigrateOptions{Prune: true, WriteOptions: engine.WriteOptions{Sink: "null"}}, "--prune needs --sink dynamodb"},
		{engine.MigrateOptions{ChangesOnly: true, Prune: true}, "--changes-only with --prune"},
		{engine.MigrateOptions{ChangesOnly: true, Resume: true}, "--changes-only with --resume"},
	} {
		t.Run(tc.says, func(t *testing.T) {
			cfg := engine.Config{Mapping: "nowhere.yaml", Source: "postgres://nobody@127.0.0.1:1/none"}
			err := engine.Migrate(context.Background(), cfg, tc.o)
			if kind, _ := engine.KindOf(err); kind != engine.KindRefused || err == nil || !strings.Contains(err.Error(), tc.says) {
				t.Errorf("Migrate: %v (kind %v), want refused saying %q", err, kind, tc.says)
			}
		})
	}
}
