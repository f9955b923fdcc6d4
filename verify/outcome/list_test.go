package outcome

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	gocmp "github.com/google/go-cmp/cmp"

	"github.com/pg2dynamo/pg2dynamo/internal/extsort"
)

// A list counts every entry it is offered and keeps the first of them,
// sorted by item key, on disk; it writes them as json.MarshalIndent
// writes the slice, indented or not, and decodes back into memory.
func TestListKeepsTheFirstAndCountsAll(t *testing.T) {
	g, err := extsort.NewGroup("pg2dynamo-test-", 512) // a few entries a run
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	b := NewListBuilder[ItemRef](g, "t", 50)
	var offered []ItemRef
	for i := range 80 {
		ref := ItemRef{PK: fmt.Sprintf("P#%02d<&>", (i*37)%80), SK: "S", Type: "T"}
		offered = append(offered, ref)
		if err := b.Add(ref.PK+"\x00"+ref.SK, ref); err != nil {
			t.Fatal(err)
		}
	}
	l, count := b.List()
	if want := (ListCount{Total: 80, Listed: 50}); count != want || !count.Truncated() {
		t.Errorf("count %+v, want %+v, truncated", count, want)
	}
	kept := offered[:50]
	want := NewList(sortedRefs(kept)...)
	got, err := l.Slice()
	if err != nil {
		t.Fatal(err)
	}
	if d := gocmp.Diff(sortedRefs(kept), got); d != "" {
		t.Errorf("entries (-want +got):\n%s", d)
	}
	for _, ind := range []string{"", "  "} {
		wantJSON, err := json.MarshalIndent(sortedRefs(kept), "  ", ind)
		if ind == "" {
			wantJSON, err = json.Marshal(sortedRefs(kept))
		}
		if err != nil {
			t.Fatal(err)
		}
		for name, l := range map[string]List[ItemRef]{"on disk": l, "in memory": want} {
			var buf bytes.Buffer
			if err := l.WriteJSON(&buf, "  ", ind); err != nil {
				t.Fatal(err)
			}
			if d := gocmp.Diff(string(wantJSON), buf.String()); d != "" {
				t.Errorf("%s, indent %q (-json.MarshalIndent +WriteJSON):\n%s", name, ind, d)
			}
		}
	}
	var back List[ItemRef]
	if err := json.Unmarshal(must(l.MarshalJSON()), &back); err != nil {
		t.Fatal(err)
	}
	if d := gocmp.Diff(got, must(back.Slice())); d != "" {
		t.Errorf("decoded (-want +got):\n%s", d)
	}
	var empty bytes.Buffer
	if err := (List[ItemRef]{}).WriteJSON(&empty, "", "  "); err != nil || empty.String() != "[]" {
		t.Errorf("empty list: %q, %v; want []", empty.String(), err)
	}
}

func sortedRefs(refs []ItemRef) []ItemRef {
	out := slices.Clone(refs)
	slices.SortFunc(out, func(a, b ItemRef) int { return strings.Compare(a.PK+"\x00"+a.SK, b.PK+"\x00"+b.SK) })
	return out
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
