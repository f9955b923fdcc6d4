package export

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// An export may share its prefix only with the other shards of its own
// split: every other data object or manifest there conflicts, a crashed
// run's temporary file included.
func TestConflicts(t *testing.T) {
	dir := Dir{Path: t.TempDir()}
	for _, key := range []string{"data/shard-1-of-2-00001.json.gz", "manifest-shard-1-of-2.json", "data/shard-1-of-3-00001.json.gz", "notes.txt"} {
		if err := os.MkdirAll(filepath.Join(dir.Path, filepath.Dir(key)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir.Path, key), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cases := []struct {
		index, count int
		want         []string
	}{
		{2, 2, []string{"data/shard-1-of-3-00001.json.gz"}},
		{1, 2, []string{"data/shard-1-of-2-00001.json.gz", "data/shard-1-of-3-00001.json.gz", "manifest-shard-1-of-2.json"}},
		{0, 0, []string{"data/shard-1-of-2-00001.json.gz", "data/shard-1-of-3-00001.json.gz", "manifest-shard-1-of-2.json"}},
	}
	for _, tc := range cases {
		got, err := Conflicts(context.Background(), dir, tc.index, tc.count)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("shard %d of %d: conflicts %q, want %q", tc.index, tc.count, got, tc.want)
		}
	}
	if got, err := Conflicts(context.Background(), Dir{Path: filepath.Join(dir.Path, "none")}, 0, 0); err != nil || len(got) != 0 {
		t.Errorf("a directory not yet created: %q, %v; want no conflict", got, err)
	}
}

// Unlisted finds the data objects no manifest lists, and those listed but
// absent.
func TestUnlisted(t *testing.T) {
	mans := []*Manifest{{Objects: []Object{{Key: "data/a"}, {Key: "data/b"}}}, {Objects: []Object{{Key: "data/c"}}}}
	extra, missing := Unlisted([]string{"data/a", "data/c", "data/old"}, mans)
	if !slices.Equal(extra, []string{"data/old"}) || !slices.Equal(missing, []string{"data/b"}) {
		t.Errorf("extra %q, missing %q; want [data/old] and [data/b]", extra, missing)
	}
}
