package extsort

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	gocmp "github.com/google/go-cmp/cmp"
)

// A sorter returns its records in order whatever its budget: held in
// memory, written as a few runs, or as more runs than one merge reads
// (maxFanIn), merged in passes. Equal records keep the order they were
// added in, and a second read gives the same records.
func TestSorterOrdersWithinAnyBudget(t *testing.T) {
	byFirstByte := func(a, b []byte) int { return int(a[0]) - int(b[0]) }
	tests := []struct {
		name    string
		budget  int
		records int
	}{
		{"in memory", 1 << 20, 1000},
		{"a few runs", 4 << 10, 1000},
		{"more runs than one merge reads", 256, 3000},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g, err := NewGroup("pg2dynamo-test-", tc.budget)
			if err != nil {
				t.Fatal(err)
			}
			defer g.Close()
			s := g.NewSorter("t", byFirstByte)
			r := rand.New(rand.NewPCG(1, 2))
			var want [][]byte
			for i := range tc.records {
				rec := []byte(fmt.Sprintf("%c%06d", 'a'+r.IntN(20), i)) // many equal first bytes
				want = append(want, rec)
				if err := s.Add(rec); err != nil {
					t.Fatal(err)
				}
			}
			slices.SortStableFunc(want, byFirstByte)
			for pass := range 2 {
				var got [][]byte
				if err := s.Each(func(rec []byte) error { got = append(got, bytes.Clone(rec)); return nil }); err != nil {
					t.Fatal(err)
				}
				if d := gocmp.Diff(want, got); d != "" {
					t.Fatalf("pass %d, %d runs (-want +got):\n%s", pass+1, len(s.runs), d)
				}
			}
			if s.Len() != int64(tc.records) {
				t.Errorf("len %d, want %d", s.Len(), tc.records)
			}
		})
	}
}

// Sorters of one group share its budget: past it, the one holding the
// most writes a run, and the group's memory stays within the budget.
func TestSortGroupSpillsTheLargest(t *testing.T) {
	g, err := NewGroup("pg2dynamo-test-", 64<<10)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	big, small := g.NewSorter("big", bytes.Compare), g.NewSorter("small", bytes.Compare)
	rec := bytes.Repeat([]byte("x"), 100)
	for range 10 {
		if err := small.Add(rec); err != nil {
			t.Fatal(err)
		}
	}
	for range 5000 {
		if err := big.Add(rec); err != nil {
			t.Fatal(err)
		}
		if g.used > g.budget {
			t.Fatalf("group holds %d bytes, budget %d", g.used, g.budget)
		}
	}
	if len(big.runs) == 0 || len(small.runs) != 0 {
		t.Errorf("runs: big %d, small %d; want the big one written out, the small one kept", len(big.runs), len(small.runs))
	}
}
