package codecheck

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// flagWord is a command-line flag: "--" then a letter, or a verb that
// formats one ("--%s").
var flagWord = regexp.MustCompile(`--[A-Za-z%]`)

// namesFlag says whether string literal s names a flag of pg2dynamo's: a
// literal that begins "aws " is a command of the AWS CLI, whose flags are
// its own.
func namesFlag(s string) bool {
	return flagWord.MatchString(s) && !strings.HasPrefix(s, "aws ")
}

// flagLiterals returns the positions of f's string literals that name a
// flag.
func flagLiterals(fset *token.FileSet, f *ast.File) []token.Position {
	var out []token.Position
	ast.Inspect(f, func(n ast.Node) bool {
		lit, ok := n.(*ast.BasicLit)
		if !ok || lit.Kind != token.STRING {
			return true
		}
		if s, err := strconv.Unquote(lit.Value); err == nil && namesFlag(s) {
			out = append(out, fset.Position(lit.Pos()))
		}
		return true
	})
	return out
}

// The engine names no flag (issue 37): its errors and notes name option
// fields (engine.Option), which app words as flags (engine.Config.Naming),
// so a library caller is not told of flags it never had. app names flags
// (a check that recognises none there would pass).
func TestEngineNamesNoFlag(t *testing.T) {
	fset, parsed := parseSources(t, parser.SkipObjectResolution)
	inApp := 0
	for _, p := range parsed {
		rel := filepath.ToSlash(p.rel)
		lits := flagLiterals(fset, p.file)
		switch path.Dir(rel) {
		case "app":
			inApp += len(lits)
		case "engine":
			for _, pos := range lits {
				t.Errorf("%v: a string literal names a flag: name the engine.Option (Config.Naming words it)", pos)
			}
		}
	}
	if inApp == 0 {
		t.Fatal("found no flag in app/'s string literals: the check recognises none")
	}
}

// TestNamesFlag checks the recogniser on literals.
func TestNamesFlag(t *testing.T) {
	for lit, want := range map[string]bool{
		"--resume: no checkpoint":                     true,
		"run with --follow --resume":                  true,
		"--%s needs a sink":                           true,
		"a range 2–24 -- not a flag":                  false,
		"---":                                         false,
		"pg2dynamo migrate --changes-only":            true,
		"aws dynamodb update-table --warm-throughput": false,
	} {
		if got := namesFlag(lit); got != want {
			t.Errorf("namesFlag(%q) = %v, want %v", lit, got, want)
		}
	}
}
