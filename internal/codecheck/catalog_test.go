package codecheck

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/pg2dynamo/pg2dynamo/tools/testenv"
)

// catalogPackage is the one directory whose code may query PostgreSQL's
// system catalogs.
const catalogPackage = "extract"

// catalogNames are the system catalogs, views, schemas and partition
// functions that only catalogPackage may name; so are the pg_publication*
// catalogs and regclass casts (catalogQuery).
var catalogNames = map[string]bool{
	"pg_catalog": true, "information_schema": true,
	"pg_class": true, "pg_namespace": true, "pg_attribute": true, "pg_type": true,
	"pg_index": true, "pg_constraint": true, "pg_inherits": true,
	"pg_partition_tree": true, "pg_partition_root": true, "pg_partition_ancestors": true,
	"pg_replication_slots": true,
}

// catalogQuery is a catalog query in a string literal: a system catalog
// or view (pg_class, pg_publication_tables, …), a schema of them, or a
// regclass cast, which resolves a name through pg_class.
func catalogQuery(lit string) string {
	for _, w := range strings.FieldsFunc(lit, func(r rune) bool {
		return !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9')
	}) {
		switch w = strings.ToLower(w); {
		case catalogNames[w], strings.HasPrefix(w, "pg_publication"), strings.HasSuffix(w, "regclass"):
			return w
		}
	}
	return ""
}

// catalogUse is a string literal outside catalogPackage that reads the
// catalog: where it is and what it names.
type catalogUse struct {
	pos  token.Position
	name string
}

func (u catalogUse) String() string {
	return fmt.Sprintf("%s:%d: reads %s outside %s/: use extract.Catalog", u.pos.Filename, u.pos.Line, u.name, catalogPackage)
}

// catalogUses returns the string literals of f that read the catalog.
func catalogUses(fset *token.FileSet, f *ast.File) []catalogUse {
	var out []catalogUse
	ast.Inspect(f, func(n ast.Node) bool {
		lit, ok := n.(*ast.BasicLit)
		if !ok || lit.Kind != token.STRING {
			return true
		}
		s, err := strconv.Unquote(lit.Value)
		if err != nil {
			return true
		}
		if name := catalogQuery(s); name != "" {
			out = append(out, catalogUse{fset.Position(lit.Pos()), name})
		}
		return true
	})
	return out
}

// TestCatalogQueriesOnlyInExtract fails naming every string literal of the
// module's non-test code, outside extract/, bench/ and tools/testenv/
// (the tests' own set-up and clean-up of their databases), that names a
// system catalog (issue 27): one reader, extract.Catalog, reads it.
func TestCatalogQueriesOnlyInExtract(t *testing.T) {
	fset, parsed := parseSources(t, parser.SkipObjectResolution)
	inCatalog := 0
	for _, p := range parsed {
		rel, f := p.rel, p.file
		if strings.HasPrefix(filepath.ToSlash(rel), "tools/testenv/") {
			continue
		}
		uses := catalogUses(fset, f)
		if filepath.Dir(rel) == catalogPackage {
			inCatalog += len(uses)
			continue
		}
		for _, u := range uses {
			t.Errorf("%v", u)
		}
	}
	// A check that recognises nothing would pass; extract reads pg_class.
	if inCatalog == 0 {
		t.Fatalf("found no catalog query in %s/: the check recognises none", catalogPackage)
	}
}

// TestCatalogQuery checks the recogniser on literals.
func TestCatalogQuery(t *testing.T) {
	for lit, want := range map[string]string{
		"SELECT relname FROM pg_class":                             "pg_class",
		"SELECT 1 FROM pg_catalog.pg_index i":                      "pg_catalog",
		"SELECT * FROM information_schema.columns":                 "information_schema",
		"SELECT tablename FROM pg_publication_tables":              "pg_publication_tables",
		"SELECT active FROM PG_REPLICATION_SLOTS":                  "pg_replication_slots",
		"SELECT $1::text::regclass":                                "regclass",
		"SELECT to_regclass($1)":                                   "to_regclass",
		"SELECT pg_export_snapshot()":                              "",
		"SELECT pg_drop_replication_slot($1)":                      "",
		"SELECT setting FROM pg_settings WHERE name = 'wal_level'": "",
		"read the snapshot that pg_export_snapshot() keeps open":   "",
	} {
		if got := catalogQuery(lit); got != want {
			t.Errorf("catalogQuery(%q) = %q, want %q", lit, got, want)
		}
	}
}

// parsedFile is a non-test Go file of the module, parsed.
type parsedFile struct {
	rel  string // its path from the repository's root
	file *ast.File
}

// parseSources parses every non-test Go file of the module (sourceFiles)
// with mode, or fails t.
func parseSources(t *testing.T, mode parser.Mode) (*token.FileSet, []parsedFile) {
	t.Helper()
	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	files, err := sourceFiles(root)
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var out []parsedFile
	for _, rel := range files {
		f, err := parser.ParseFile(fset, rel, readFile(t, root, rel), mode)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, parsedFile{rel, f})
	}
	return fset, out
}
