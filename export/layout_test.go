package export

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// An export may share its prefix only with the other shards of its own
// split, finished or under way (their temporary files): every other data
// object or manifest there conflicts, a temporary file of an export not
// split, or of this very shard, included.
func TestConflicts(t *testing.T) {
	dir := Dir{Path: t.TempDir()}
	for _, key := range []string{"data/shard-1-of-2-00001.json.gz", "manifest-shard-1-of-2.json", "data/shard-1-of-3-00001.json.gz", "notes.txt",
		"data/.shard-1-of-2-00002.json.gz.4242", "data/.shard-2-of-2-00001.json.gz.77", "data/.00001.json.gz.99", "data/shard-1-of-20-00001.json.gz"} {
		if err := os.MkdirAll(filepath.Join(dir.Path, filepath.Dir(key)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir.Path, key), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	all := []string{"data/.00001.json.gz.99", "data/.shard-1-of-2-00002.json.gz.4242", "data/.shard-2-of-2-00001.json.gz.77",
		"data/shard-1-of-2-00001.json.gz", "data/shard-1-of-20-00001.json.gz", "data/shard-1-of-3-00001.json.gz", "manifest-shard-1-of-2.json"}
	cases := []struct {
		index, count int
		want         []string
	}{
		{2, 2, []string{"data/.00001.json.gz.99", "data/.shard-2-of-2-00001.json.gz.77", "data/shard-1-of-20-00001.json.gz", "data/shard-1-of-3-00001.json.gz"}},
		{1, 2, []string{"data/.00001.json.gz.99", "data/.shard-1-of-2-00002.json.gz.4242", "data/shard-1-of-2-00001.json.gz",
			"data/shard-1-of-20-00001.json.gz", "data/shard-1-of-3-00001.json.gz", "manifest-shard-1-of-2.json"}},
		{0, 0, all},
	}
	for _, tc := range cases {
		got, err := Conflicts(context.Background(), dir, tc.index, tc.count)
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(tc.want, got); d != "" {
			t.Errorf("shard %d of %d: conflicts (-want +got):\n%s", tc.index, tc.count, d)
		}
	}
	if got, err := Conflicts(context.Background(), Dir{Path: filepath.Join(dir.Path, "none")}, 0, 0); err != nil || len(got) != 0 {
		t.Errorf("a directory not yet created: %q, %v; want no conflict", got, err)
	}
}

// An object aborted leaves nothing in the directory, and Remove deletes a
// complete one.
func TestDirAbortAndRemove(t *testing.T) {
	ctx := context.Background()
	dir := Dir{Path: t.TempDir()}
	w, err := dir.Create(ctx, "data/00001.json.gz")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write([]byte("partial")); err != nil {
		t.Fatal(err)
	}
	if keys, _ := dir.List(ctx, ""); len(keys) != 1 || !IsTemporary(keys[0]) {
		t.Fatalf("an object being written: %q, want one temporary file", keys)
	}
	if err := w.Abort(); err != nil {
		t.Fatal(err)
	}
	if keys, err := dir.List(ctx, ""); err != nil || len(keys) != 0 {
		t.Errorf("after Abort: %q, %v; want nothing", keys, err)
	}
	w, err = dir.Create(ctx, "data/00002.json.gz")
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if keys, _ := dir.List(ctx, ""); !slices.Equal(keys, []string{"data/00002.json.gz"}) {
		t.Errorf("after Close: %q, want the object", keys)
	}
	for range 2 { // a second Remove finds nothing to remove, and is no error
		if err := dir.Remove(ctx, "data/00002.json.gz"); err != nil {
			t.Error(err)
		}
	}
	if keys, _ := dir.List(ctx, ""); len(keys) != 0 {
		t.Errorf("after Remove: %q, want nothing", keys)
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

// The manifests under a prefix make one export only when every shard of
// one split is there, all read from one named snapshot; the error names
// the missing shards and the snapshots that differ.
func TestCheckShards(t *testing.T) {
	at := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	man := func(shard, snapshot string, late time.Duration) *Manifest {
		return &Manifest{Shard: shard, Snapshot: snapshot, SnapshotTime: at.Add(late)}
	}
	cases := []struct {
		name string
		mans []*Manifest
		want string // in the error; "" for none
	}{
		{"not split", []*Manifest{man("", "", 0)}, ""},
		{"not split, on a snapshot", []*Manifest{man("", "00000003-0000001B-1", 0)}, ""},
		{"every shard, one snapshot", []*Manifest{man("2/3", "S", 0), man("1/3", "S", time.Second), man("3/3", "S", 0)}, ""},
		{"one missing", []*Manifest{man("1/3", "S", 0), man("2/3", "S", 0)},
			"shard 3/3 is missing (no manifest-shard-3-of-3.json: it has not finished, or it failed)"},
		{"two missing", []*Manifest{man("3/5", "S", 0), man("1/5", "S", 0), man("5/5", "S", 0)},
			"shards 2/5, 4/5 of 5 are missing (no manifest-shard-2-of-5.json, manifest-shard-4-of-5.json"},
		{"snapshots of their own", []*Manifest{man("1/2", "", 0), man("2/2", "", 3500*time.Millisecond)},
			"the shards did not read one snapshot: 1/2, 2/2 read snapshots of their own (no --snapshot); they began reading up to 3.5s apart"},
		{"two names and none", []*Manifest{man("1/3", "A", 0), man("2/3", "B", 0), man("3/3", "", time.Second)},
			"1/3 read snapshot A; 2/3 read snapshot B; 3/3 read a snapshot of its own (no --snapshot)"},
		{"a whole export beside shards", []*Manifest{man("", "", 0), man("1/2", "S", 0), man("2/2", "S", 0)},
			"manifest.json, of an export not split, beside the manifests of shards"},
		{"different splits", []*Manifest{man("1/2", "S", 0), man("1/3", "S", 0), man("2/2", "S", 0)},
			"manifests of shards of different splits (1/2, 1/3)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckShards(tc.mans)
			if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
				t.Errorf("CheckShards: %v; want %q", err, tc.want)
			}
		})
	}
}
