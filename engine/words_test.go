package engine_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"slices"
	"strconv"
	"testing"

	"github.com/pg2dynamo/pg2dynamo/engine"
)

// engine.Options lists every Option constant words.go declares, so a
// caller's check of its Naming (app's TestEveryOptionHasItsFlag) covers
// each.
func TestOptionsListsEveryOption(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "words.go", nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	declared := 0
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, spec := range g.Specs {
			vs := spec.(*ast.ValueSpec)
			if id, ok := vs.Type.(*ast.Ident); !ok || id.Name != "Option" {
				continue
			}
			for i, n := range vs.Names {
				declared++
				v, _ := strconv.Unquote(vs.Values[i].(*ast.BasicLit).Value)
				if !slices.Contains(engine.Options, engine.Option(v)) {
					t.Errorf("%s (%q) is not in engine.Options", n.Name, v)
				}
			}
		}
	}
	if declared != len(engine.Options) {
		t.Errorf("words.go declares %d Options, engine.Options lists %d", declared, len(engine.Options))
	}
}
