package follow

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pg2dynamo/pg2dynamo/internal/extsort"
)

// A pass's spill files hold no name on disk while they are written and read
// (Linux unlinks an open file), so a follow killed mid-pass leaves at most an
// empty directory; the records read back are those added, by slice.
func TestSpillFilesAreUnlinked(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	dir, err := extsort.NewGroup("pg2dynamo-audit-", 0)
	if err != nil {
		t.Fatal(err)
	}
	s, err := newSpill(dir, "derived", 3)
	if err != nil {
		t.Fatal(err)
	}
	want := map[int][]auditRecord{
		0: {{key: [2]string{"ORG#1", "ORG#1"}, hash: 7, entity: 0}, {key: [2]string{"ORG#1", "USER#2"}, hash: 1 << 63, entity: 1}},
		2: {{key: [2]string{"ORG#9", ""}, hash: 3, entity: -1, typ: "user"}},
	}
	for slice, recs := range want {
		for _, r := range recs {
			if err := s.add(slice, r); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := s.flush(); err != nil {
		t.Fatal(err)
	}
	dirs, _ := filepath.Glob(filepath.Join(tmp, "pg2dynamo-audit-*"))
	if len(dirs) != 1 {
		t.Fatalf("audit directories in TMPDIR: %v", dirs)
	}
	if names, _ := os.ReadDir(dirs[0]); len(names) != 0 {
		t.Errorf("spill files named on disk during the pass: %v", names)
	}
	for slice := range 3 {
		var got []auditRecord
		if err := s.each(slice, func(r auditRecord) error { got = append(got, r); return nil }); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want[slice], got, cmp.AllowUnexported(auditRecord{})); diff != "" {
			t.Errorf("slice %d (-added +read):\n%s", slice, diff)
		}
	}
	s.Close()
	if err := dir.Close(); err != nil {
		t.Fatal(err)
	}
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Errorf("left in TMPDIR after the pass: %v", left)
	}
}
