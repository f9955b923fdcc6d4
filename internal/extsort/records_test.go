package extsort

import (
	"fmt"
	"os"
	"sync"
	"testing"

	gocmp "github.com/google/go-cmp/cmp"
)

// Records read back as appended, past their write buffer, with appends going on
// after a read; no file holds a name on disk, and nothing is left once the group
// closes.
func TestRecordsReadBackAsAppended(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	g, err := NewGroup("pg2dynamo-test-", 0)
	if err != nil {
		t.Fatal(err)
	}
	r, err := g.NewRecords("journal-*", 64)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	read := func() []string {
		t.Helper()
		var got []string
		if err := r.Each(func(rec []byte) error { got = append(got, string(rec)); return nil }); err != nil {
			t.Fatal(err)
		}
		return got
	}
	for round := range 2 {
		for i := range 50 {
			rec := fmt.Sprintf("%d-%d", round, i)
			if i == 7 {
				rec = "" // an empty record is a record
			}
			want = append(want, rec)
			if err := r.Append([]byte(rec)); err != nil {
				t.Fatal(err)
			}
		}
		if diff := gocmp.Diff(want, read()); diff != "" {
			t.Fatalf("round %d (-appended +read):\n%s", round, diff)
		}
	}
	if names, _ := os.ReadDir(g.dir); len(names) != 0 {
		t.Errorf("record files named on disk: %v", names)
	}
	if err := g.Close(); err != nil {
		t.Fatal(err)
	}
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Errorf("left in TMPDIR: %v", left)
	}
}

// Buckets take adds from many goroutines at once and give each bucket's records
// back, each goroutine's in the order it added them.
func TestBucketsTakeConcurrentAdds(t *testing.T) {
	g, err := NewGroup("pg2dynamo-test-", 0)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	b, err := g.NewBuckets("bucket-*", 3, 128)
	if err != nil {
		t.Fatal(err)
	}
	const writers, each = 4, 300
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				if err := b.Add(i%3, func(rec []byte) []byte { return append(rec, byte(w), byte(i>>8), byte(i)) }); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if err := b.Flush(); err != nil {
		t.Fatal(err)
	}
	if got := b.Records(); got != writers*each {
		t.Errorf("Records() = %d, want %d", got, writers*each)
	}
	for i := range b.Len() {
		next := make([]int, writers) // each writer's next record in bucket i
		for w := range next {
			next[w] = i
		}
		err := b.Each(i, func(rec []byte) error {
			w, n := int(rec[0]), int(rec[1])<<8|int(rec[2])
			if n != next[w] {
				return fmt.Errorf("bucket %d: writer %d's record %d, want %d", i, w, n, next[w])
			}
			next[w] += 3
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		for w, n := range next {
			if n < each {
				t.Errorf("bucket %d: writer %d's records end before %d", i, w, n)
			}
		}
	}
}
