package schemagen_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/pg2dynamo/pg2dynamo/mapping"
	"github.com/pg2dynamo/pg2dynamo/tools/schemagen"
)

// mappingDir is the mapping package's source, beside this module.
const mappingDir = "../../mapping"

// TestSchemaGenerated fails when mapping.schema.json (and so the embedded
// mapping.JSONSchema) is not what the generator makes of the Go types now:
// a field, doc comment or rule changed without `go generate ./mapping`, or
// the file was edited by hand.
func TestSchemaGenerated(t *testing.T) {
	want, err := schemagen.Generate(mappingDir)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(mappingDir, "mapping.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) || !bytes.Equal(mapping.JSONSchema, want) {
		at := firstDiff(got, want)
		t.Fatalf("mapping.schema.json differs from the schema generated from the Go types (first at line %d): run go generate ./mapping",
			1+bytes.Count(got[:min(at, len(got))], []byte("\n")))
	}
}

// TestSchemaGenerateDeterministic generates the schema twice: the output
// must not depend on map order.
func TestSchemaGenerateDeterministic(t *testing.T) {
	a, err := schemagen.Generate(mappingDir)
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		b, err := schemagen.Generate(mappingDir)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a, b) {
			t.Fatalf("two runs differ at byte %d", firstDiff(a, b))
		}
	}
	if !bytes.HasSuffix(a, []byte("}\n")) {
		t.Errorf("the schema does not end in one newline")
	}
}

// firstDiff returns the offset of the first byte where a and b differ.
func firstDiff(a, b []byte) int {
	n := min(len(a), len(b))
	for i := range n {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}
