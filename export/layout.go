package export

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// ShardTag names a shard in object and manifest keys:
// data/shard-2-of-3-00001.json.gz, manifest-shard-2-of-3.json.
func ShardTag(index, count int) string { return fmt.Sprintf("shard-%d-of-%d", index, count) }

// Conflicts returns the objects at a location an export (shard index of count;
// count < 2: whole) would mix with: an import reads all of DataPrefix, so only
// the other shards of the same split, their temporary files included, may share
// it.
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

// shardKey matches a shard's object, temporary and manifest keys.
var shardKey = regexp.MustCompile(`^(?:` + regexp.QuoteMeta(DataPrefix) + `\.?|manifest-)shard-([0-9]+)-of-([0-9]+)[-.]`)

func siblingShard(key string, index, count int) bool {
	m := shardKey.FindStringSubmatch(key)
	if count < 2 || m == nil {
		return false
	}
	j, jerr := strconv.Atoi(m[1])
	n, nerr := strconv.Atoi(m[2])
	return jerr == nil && nerr == nil && n == count && j != index && j >= 1 && j <= n
}

// Unlisted compares the data objects at loc with the manifests' lists: extra
// are objects none lists (which an import would load too), missing are listed
// objects not there.
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

// CheckShards checks that mans make one whole export: one unsplit manifest, or
// every shard 1/N to N/N of one split on one snapshot; else an import would
// miss a shard's rows or hold rows changed between snapshots twice or not at
// all.
func CheckShards(mans []*Manifest) error {
	if len(mans) == 1 && mans[0].Shard == "" {
		return nil
	}
	byIndex := map[int]*Manifest{}
	seen := map[int]bool{} // the Ns
	var splits []string    // each N once, as the first of its shards names it
	count := 0
	for _, m := range mans {
		var i, n int
		if _, err := fmt.Sscanf(m.Shard, "%d/%d", &i, &n); err != nil || i < 1 || i > n {
			return fmt.Errorf("%s, of an export not split, beside the manifests of shards: two exports in one prefix", ManifestKey)
		}
		if !seen[n] {
			seen[n], count = true, n
			splits = append(splits, m.Shard)
		}
		byIndex[i] = m
	}
	if len(splits) > 1 {
		return fmt.Errorf("manifests of shards of different splits (%s): two exports in one prefix", strings.Join(splits, ", "))
	}
	var missing, keys []string
	for i := 1; i <= count; i++ {
		if byIndex[i] == nil {
			missing = append(missing, fmt.Sprintf("%d/%d", i, count))
			keys = append(keys, "manifest-"+ShardTag(i, count)+".json")
		}
	}
	switch {
	case len(missing) == 1:
		return fmt.Errorf("shard %s is missing (no %s: it has not finished, or it failed): run it with the other shards' --snapshot, or export every shard again, then import",
			missing[0], keys[0])
	case len(missing) > 1:
		return fmt.Errorf("shards %s of %d are missing (no %s: they have not finished, or they failed): run them with the other shards' --snapshot, or export every shard again, then import",
			strings.Join(missing, ", "), count, strings.Join(keys, ", "))
	}
	shardsOf := map[string][]string{} // snapshot name → its shards
	var names []string                // in the order of their first shard
	first, last := byIndex[1].SnapshotTime, byIndex[1].SnapshotTime
	for i := 1; i <= count; i++ {
		m := byIndex[i]
		if _, ok := shardsOf[m.Snapshot]; !ok {
			names = append(names, m.Snapshot)
		}
		shardsOf[m.Snapshot] = append(shardsOf[m.Snapshot], m.Shard)
		if m.SnapshotTime.Before(first) {
			first = m.SnapshotTime
		}
		if m.SnapshotTime.After(last) {
			last = m.SnapshotTime
		}
	}
	if len(names) == 1 && names[0] != "" {
		return nil
	}
	var read []string
	for _, name := range names {
		shards := shardsOf[name]
		what := "snapshot " + name
		switch {
		case name == "" && len(shards) == 1:
			what = "a snapshot of its own (no --snapshot)"
		case name == "":
			what = "snapshots of their own (no --snapshot)"
		}
		read = append(read, strings.Join(shards, ", ")+" read "+what)
	}
	return fmt.Errorf("the shards did not read one snapshot: %s; they began reading up to %s apart, and a row changed in between can be missing or imported twice: export every shard again with one --snapshot NAME (pg2dynamo snapshot hold)",
		strings.Join(read, "; "), last.Sub(first).Round(time.Millisecond))
}
