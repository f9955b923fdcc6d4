package export

import (
	"context"
	"fmt"
	"slices"
	"strings"
)

// ShardTag names shard index of count in an export's object and manifest
// keys: data/shard-2-of-3-00001.json.gz, manifest-shard-2-of-3.json.
func ShardTag(index, count int) string { return fmt.Sprintf("shard-%d-of-%d", index, count) }

// Conflicts returns the objects at a location that an export (of shard
// index of count, or the whole export when count < 2) would mix with: an
// import reads every object under DataPrefix, so only the other shards of
// the same split may share a prefix. Any other data object or manifest is
// a conflict: an earlier export's, or a crashed run's.
func Conflicts(ctx context.Context, store Store, index, count int) ([]string, error) {
	var out []string
	for _, prefix := range []string{DataPrefix, "manifest"} {
		keys, err := store.List(ctx, prefix)
		if err != nil {
			return nil, err
		}
		for _, k := range keys {
			if !siblingShard(k, index, count) {
				out = append(out, k)
			}
		}
	}
	return out, nil
}

// siblingShard reports whether key belongs to another shard of the same
// split (count ≥ 2) than index.
func siblingShard(key string, index, count int) bool {
	if count < 2 {
		return false
	}
	name := strings.TrimPrefix(strings.TrimPrefix(key, DataPrefix), "manifest-")
	for j := 1; j <= count; j++ {
		if j != index && strings.HasPrefix(name, ShardTag(j, count)) {
			return true
		}
	}
	return false
}

// Unlisted compares the data objects at loc (keys) with those the
// manifests list: extra are objects no manifest lists (an earlier export
// into the same prefix, or a crashed one: an import would load them too);
// missing are objects a manifest lists that are not there.
func Unlisted(keys []string, mans []*Manifest) (extra, missing []string) {
	listed := map[string]bool{}
	for _, m := range mans {
		for _, o := range m.Objects {
			listed[o.Key] = true
		}
	}
	present := map[string]bool{}
	for _, k := range keys {
		present[k] = true
		if !listed[k] {
			extra = append(extra, k)
		}
	}
	for k := range listed {
		if !present[k] {
			missing = append(missing, k)
		}
	}
	slices.Sort(missing)
	return extra, missing
}
