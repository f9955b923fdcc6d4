package codecheck

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pg2dynamo/pg2dynamo/tools/testenv"
)

// longFunc is a function over the limit: where it is, its name as
// "pkg.Func" or "(*pkg.Type).Method", and its length in lines.
type longFunc struct {
	pos   token.Position
	name  string
	lines int
}

func (f longFunc) String() string {
	return fmt.Sprintf("%s:%d: %s is %d lines (limit %d)", f.pos.Filename, f.pos.Line, f.name, f.lines, MaxFuncLines)
}

// TestFuncLength fails naming every function of the module and of the
// tools module but its bench (the demo's helper, which users run, and the
// tests' support), outside tests, longer than MaxFuncLines.
func TestFuncLength(t *testing.T) {
	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	files, err := sourceFiles(root)
	if err != nil {
		t.Fatal(err)
	}
	// A walk that finds nothing would pass; the module has main.go at its root.
	if !contains(files, "main.go") {
		t.Fatalf("source walk from %s did not find main.go (found %d files)", root, len(files))
	}
	fset := token.NewFileSet()
	for _, rel := range files {
		f, err := parser.ParseFile(fset, rel, readFile(t, root, rel), parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, lf := range longFuncs(fset, f, MaxFuncLines) {
			t.Errorf("%v", lf)
		}
	}
}

// TestLongFuncs checks the measure itself: a function of exactly the limit
// passes, one line more fails, and names carry package and receiver.
func TestLongFuncs(t *testing.T) {
	body := func(n int) string { return strings.Repeat("\t_ = 0\n", n) }
	tests := []struct {
		name string
		src  string
		want []string
	}{
		{"at limit", "func f() {\n" + body(3) + "}\n", nil},
		{"one over", "func f() {\n" + body(4) + "}\n", []string{"p.f 6"}},
		{"one line", "func f() {}\n", nil},
		{"pointer receiver", "type T struct{}\nfunc (t *T) m() {\n" + body(4) + "}\n", []string{"(*p.T).m 6"}},
		{"value receiver", "type T struct{}\nfunc (T) m() {\n" + body(4) + "}\n", []string{"(p.T).m 6"}},
		{"generic receiver", "type T[K, V any] struct{}\nfunc (t *T[K, V]) m() {\n" + body(4) + "}\n", []string{"(*p.T).m 6"}},
		{"closure counts in its function", "func f() {\n\tg := func() {\n" + body(2) + "\t}\n\tg()\n}\n", []string{"p.f 7"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fset := token.NewFileSet()
			f, err := parser.ParseFile(fset, "p.go", "package p\n"+tt.src, 0)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, lf := range longFuncs(fset, f, 5) {
				got = append(got, fmt.Sprintf("%s %d", lf.name, lf.lines))
			}
			if fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

// sourceFiles returns the module's non-test .go files under root as paths
// relative to root, in lexical order, and those of the tools module. It
// skips tools/bench and tools/lint (make bench, the linter's pin), node_modules,
// testdata, directories named .* or _* (as the go tool does) and nested
// modules.
func sourceFiles(root string) ([]string, error) {
	var files []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		if d.IsDir() {
			if rel != "." && skipDir(root, rel, d.Name()) {
				return filepath.SkipDir
			}
			return nil
		}
		if d.Type().IsRegular() && strings.HasSuffix(rel, ".go") && !strings.HasSuffix(rel, "_test.go") {
			files = append(files, rel)
		}
		return nil
	})
	return files, err
}

func skipDir(root, rel, name string) bool {
	switch {
	case rel == "tools/bench", rel == "tools/lint", name == "node_modules", name == "testdata",
		strings.HasPrefix(name, "."), strings.HasPrefix(name, "_"):
		return true
	case rel == "tools":
		return false
	}
	_, err := os.Stat(filepath.Join(root, rel, "go.mod"))
	return err == nil
}

// longFuncs returns the function declarations of f longer than limit lines,
// from the func keyword to the closing brace inclusive. Function literals
// count towards the declaration that holds them.
func longFuncs(fset *token.FileSet, f *ast.File, limit int) []longFunc {
	var out []longFunc
	for _, decl := range f.Decls {
		fd, ok := decl.(*ast.FuncDecl)
		if !ok {
			continue
		}
		start := fset.Position(fd.Pos())
		n := fset.Position(fd.End()).Line - start.Line + 1
		if n > limit {
			out = append(out, longFunc{pos: start, name: funcName(f.Name.Name, fd), lines: n})
		}
	}
	return out
}

// funcName renders fd as "pkg.Func", "(pkg.Type).Method" or
// "(*pkg.Type).Method", without type parameters.
func funcName(pkg string, fd *ast.FuncDecl) string {
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return pkg + "." + fd.Name.Name
	}
	typ := fd.Recv.List[0].Type
	star := ""
	if s, ok := typ.(*ast.StarExpr); ok {
		star, typ = "*", s.X
	}
	switch x := typ.(type) {
	case *ast.IndexExpr:
		typ = x.X
	case *ast.IndexListExpr:
		typ = x.X
	}
	id, _ := typ.(*ast.Ident)
	recv := "?"
	if id != nil {
		recv = id.Name
	}
	return fmt.Sprintf("(%s%s.%s).%s", star, pkg, recv, fd.Name.Name)
}

func readFile(t *testing.T, root, rel string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, rel))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
