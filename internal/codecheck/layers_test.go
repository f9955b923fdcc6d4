package codecheck

import (
	"go/parser"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// cliModule is the command-line library only app may import.
const cliModule = "github.com/urfave/cli/v2"

// The command line stays in app: no other package's code imports
// urfave/cli, so no *cli.Context reaches the engine or a stage; app does
// (a check that finds nothing where it must would pass).
func TestOnlyAppImportsTheCLI(t *testing.T) {
	_, parsed := parseSources(t, parser.ImportsOnly)
	inApp := 0
	for _, p := range parsed {
		rel := p.rel
		for _, imp := range p.file.Imports {
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
