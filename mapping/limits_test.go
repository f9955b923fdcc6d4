package mapping

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// aliasBomb is a "billion laughs" inside known fields: each anchor is
// nine uses of the one before, 9^9 strings in all once expanded. It
// took goccy/go-yaml's decoder to 2 GB before its type error.
func aliasBomb() string {
	var b strings.Builder
	b.WriteString("table: {name: shop}\nentities:\n  A:\n    source: {table: t}\n    pk: A\n    attributes:\n")
	b.WriteString(`      select: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]` + "\n")
	b.WriteString("      rename:\n")
	for i := 1; i <= 8; i++ {
		fmt.Fprintf(&b, "        k%d: &a%d [%s]\n", i, i, strings.TrimSuffix(strings.Repeat(fmt.Sprintf("*a%d,", i-1), 9), ","))
	}
	return b.String()
}

// entitiesMapping is a valid mapping of n entities over one table, 62
// bytes or so an entity.
func entitiesMapping(n int) string {
	var b strings.Builder
	b.WriteString("table: {name: shop}\nentities:\n")
	for i := range n {
		fmt.Fprintf(&b, "  E%d:\n    source: {table: t}\n    pk: A#${id}\n    sk: E%d#${id}\n", i, i)
	}
	return b.String()
}

// Input past each bound is refused with one located error naming the
// bound, before the parser or the decoder spends memory on it: at most
// refusalBytes allocated (the alias bomb took 2 GB before its bound).
// Memory, not time: it is the same on a busy machine.
func TestParseBounds(t *testing.T) {
	var deep strings.Builder
	deep.WriteString("table: {name: shop}\nentities:\n  A:\n    source: {table: t}\n    pk: A\n    attributes:\n      select: ")
	// The list is 4 deep (the file's mapping, entities, A, attributes):
	// the 29th "[" is the 33rd level.
	deep.WriteString(strings.Repeat("[", MaxDepth) + strings.Repeat("]", MaxDepth) + "\n")
	// Mappings of 1,000 keys, each within MaxMappingKeys: at the last key
	// of the fourth, 4 × 1,000² and the 4² of the top level pass
	// MaxKeysSquared.
	var squared strings.Builder
	for m := range 5 {
		fmt.Fprintf(&squared, "m%d:\n", m)
		for k := range MaxMappingKeys {
			fmt.Fprintf(&squared, "  k%d: 1\n", k)
		}
	}
	for _, tc := range []struct {
		name, data string
		line, col  int
		path, msg  string
	}{
		{"alias bomb", aliasBomb(), 13, 18, "entities.A.attributes.rename.k5[0]",
			"aliases expand the mapping by more than 100000 YAML nodes: a mapping file's aliases add at most 100000 in all (each use of an alias counts every node of its anchor again)"},
		{"file size", entitiesMapping(142_773), 0, 0, "",
			"the file is larger than 262144 bytes (256 KiB): a mapping file is at most 262144 bytes"},
		{"keys in one mapping", entitiesMapping(MaxMappingKeys + 1), 4003, 3, "entities",
			"more than 1000 keys in one mapping: a mapping file holds at most 1000 keys in each (entities, access patterns, renames, …)"},
		{"keys squared", squared.String(), 4 * 1001, 3, "m3",
			"too many keys in large mappings: the sum over the file's mappings of their number of keys squared is at most 4000000 (one mapping of 1000 keys counts 1000000), as the YAML parser's time grows with it"},
		{"depth", deep.String(), 7, 43, "entities.A.attributes.select",
			"nested more than 32 levels deep: a mapping file nests mappings and lists at most 32 deep"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := []byte(tc.data)
			var err error
			allocated := allocatedBy(func() { _, err = Parse("m.yaml", data) })
			t.Logf("%.1f MB allocated", float64(allocated)/(1<<20))
			if allocated > refusalBytes {
				t.Errorf("refusing it allocated %.1f MB, want at most %d MB", float64(allocated)/(1<<20), refusalBytes>>20)
			}
			var errs Errors
			if !errors.As(err, &errs) || len(errs) != 1 {
				t.Fatalf("got %v, want one mapping error", err)
			}
			want := &Error{File: "m.yaml", Line: tc.line, Column: tc.col, Path: tc.path, Msg: tc.msg}
			if *errs[0] != *want {
				t.Errorf("got  %s\nwant %s", errs[0], want)
			}
		})
	}
}

// refusalBytes bounds what refusing a mapping past a bound may allocate.
const refusalBytes = 16 << 20

// allocatedBy returns the bytes of heap f allocated (with whatever else
// ran meanwhile: the test's own goroutine alone here, no test of this
// package being parallel).
func allocatedBy(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// Files inside the bounds parse: the most entities a mapping may have,
// nested lists to the deepest level allowed, and anchors used as a
// mapping uses them.
func TestParseWithinBounds(t *testing.T) {
	m, err := Parse("m.yaml", []byte(entitiesMapping(MaxMappingKeys)))
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Entities) != MaxMappingKeys {
		t.Errorf("%d entities, want %d", len(m.Entities), MaxMappingKeys)
	}
	var b strings.Builder
	b.WriteString("table: {name: shop}\nentities:\n")
	b.WriteString("  A:\n    source: &src {table: t}\n    pk: A#${id}\n    sk: A\n    attributes: &attrs {select: [id, name], rename: {name: title}}\n")
	for i := range 500 {
		fmt.Fprintf(&b, "  B%d:\n    source: *src\n    pk: B#${id}\n    sk: B%d\n    attributes: *attrs\n", i, i)
	}
	m, err = Parse("m.yaml", []byte(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	if got := m.Entities[500].Attributes.Rename["name"]; got != "title" {
		t.Errorf("B499's rename name = %q, want title", got)
	}
}

// LoadContext reads no more than the bound of a file that never ends,
// and stops when its context is done, with the context's cause.
func TestLoadContextBounds(t *testing.T) {
	_, err := LoadContext(context.Background(), "/dev/zero")
	var errs Errors
	if !errors.As(err, &errs) || !strings.Contains(err.Error(), "/dev/zero: the file is larger than 262144 bytes") {
		t.Errorf("/dev/zero: got %v, want the size error", err)
	}

	path := filepath.Join(t.TempDir(), "m.yaml")
	if err := os.WriteFile(path, []byte(entitiesMapping(10)), 0o600); err != nil {
		t.Fatal(err)
	}
	cause := errors.New("stopped by the test")
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(cause)
	if _, err := LoadContext(ctx, path); !errors.Is(err, cause) {
		t.Errorf("canceled: got %v, want an error wrapping the cause", err)
	}
}
