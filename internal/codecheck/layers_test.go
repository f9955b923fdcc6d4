package codecheck

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/pg2dynamo/pg2dynamo/internal/testenv"
)

// cliModule is the command-line library only app may import.
const cliModule = "github.com/urfave/cli/v2"

// The command line stays in app: no other package's code imports
// urfave/cli, so no *cli.Context reaches the engine or a stage; app does
// (a check that finds nothing where it must would pass).
func TestOnlyAppImportsTheCLI(t *testing.T) {
	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	files, err := sourceFiles(root)
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	inApp := 0
	for _, rel := range files {
		f, err := parser.ParseFile(fset, rel, readFile(t, root, rel), parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if path != cliModule {
				continue
			}
			if strings.HasPrefix(filepath.ToSlash(rel), "app/") {
				inApp++
				continue
			}
			t.Errorf("%s imports %s: only app reads flags; take an options struct instead", rel, cliModule)
		}
	}
	if inApp == 0 {
		t.Fatalf("no file of app/ imports %s: the check recognises none", cliModule)
	}
}
