// Package schemagen generates mapping.schema.json from the Go types Load
// decodes into: the structs give the keys, types and descriptions (doc
// comments), and this package adds what a struct cannot say (enums, defaults,
// patterns, bounds, and rules Load checks in code). `go generate ./mapping`
// runs it; a mapping test fails when the committed file differs.
package schemagen

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path"
	"path/filepath"
	"reflect"
	"strings"
	"unicode"

	"github.com/invopop/jsonschema"

	"github.com/pg2dynamo/pg2dynamo/mapping"
)

const pkgPath = "github.com/pg2dynamo/pg2dynamo/mapping"

// Generate returns the schema as mapping.schema.json holds it: JSON indented by
// two spaces, keys in a fixed order, a final newline. srcDir holds the mapping
// package's source, read for doc comments. It fails on unparsable source or a
// rule naming a key the structs lack.
func Generate(srcDir string) (out []byte, err error) {
	r := &jsonschema.Reflector{
		FieldNameTag:               "yaml",
		RequiredFromJSONSchemaTags: true, // required keys are set by extend
		ExpandedStruct:             true,
		Anonymous:                  true,
		Namer:                      defName,
		AdditionalFields:           fileFields,
	}
	comments, err := goComments(r, srcDir)
	if err != nil {
		return nil, err
	}
	r.CommentMap = comments
	root := r.Reflect(&mapping.Mapping{})
	defer func() {
		// extend panics on a key the structs lack (a rule out of step).
		if p := recover(); p != nil {
			out, err = nil, fmt.Errorf("schemagen: %v", p)
		}
	}()
	extend(root)
	raw, err := json.Marshal(root)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := json.Indent(&buf, unescapeHTML(raw), "", "  "); err != nil {
		return nil, err
	}
	buf.WriteByte('\n')
	return buf.Bytes(), nil
}

// goComments returns the mapping package's type and field doc comments keyed as
// jsonschema.Reflector.CommentMap wants ("<import path>.Type.Field"),
// paragraphs joined as an editor shows them.
func goComments(r *jsonschema.Reflector, srcDir string) (map[string]string, error) {
	// AddGoComments keys a file's comments by base joined with the file's
	// directory: read them under a placeholder base and rename.
	const base = "schemagen.invalid"
	if err := r.AddGoComments(base, srcDir); err != nil {
		return nil, fmt.Errorf("schemagen: read the comments of %s: %w", srcDir, err)
	}
	prefix := path.Join(base, filepath.ToSlash(filepath.Clean(srcDir))) + "."
	out := map[string]string{}
	for k, v := range r.CommentMap {
		if rest, ok := strings.CutPrefix(k, prefix); ok {
			out[pkgPath+"."+rest] = paragraphs(v)
		}
	}
	r.CommentMap = nil
	return out, nil
}

// paragraphs joins the lines of each paragraph of a doc comment with
// spaces; paragraphs stay apart by a blank line.
func paragraphs(text string) string {
	var ps []string
	for p := range strings.SplitSeq(strings.TrimSpace(text), "\n\n") {
		ps = append(ps, strings.Join(strings.Fields(p), " "))
	}
	return strings.Join(ps, "\n\n")
}

// defName names a type's definition in $defs: its Go name with the
// leading capitals lowered ("GSI" gsi, "StableID" stableID).
func defName(t reflect.Type) string {
	name := []rune(t.Name())
	for i := range name {
		if !unicode.IsUpper(name[i]) || (i > 0 && i+1 < len(name) && unicode.IsLower(name[i+1])) {
			break
		}
		name[i] = unicode.ToLower(name[i])
	}
	return string(name)
}

// fileFields adds to Mapping the file's entities and access_patterns maps,
// which Mapping holds as slices.
func fileFields(t reflect.Type) []reflect.StructField {
	if t != reflect.TypeFor[mapping.Mapping]() {
		return nil
	}
	return []reflect.StructField{
		{Name: "Entities", Type: reflect.TypeFor[map[string]*mapping.Entity](), Tag: `yaml:"entities"`},
		{Name: "AccessPatterns", Type: reflect.TypeFor[map[string]*mapping.AccessPattern](), Tag: `yaml:"access_patterns"`},
	}
}

// unescapeHTML undoes encoding/json's escaping of <, > and & (\u003c, …), which
// the patterns are full of; escapes are read pairwise so an escaped backslash
// stays.
func unescapeHTML(b []byte) []byte {
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); i++ {
		if b[i] != '\\' || i+1 == len(b) {
			out = append(out, b[i])
			continue
		}
		if b[i+1] == 'u' && i+6 <= len(b) {
			switch string(b[i+2 : i+6]) {
			case "003c":
				out, i = append(out, '<'), i+5
				continue
			case "003e":
				out, i = append(out, '>'), i+5
				continue
			case "0026":
				out, i = append(out, '&'), i+5
				continue
			}
		}
		out, i = append(out, b[i], b[i+1]), i+1
	}
	return out
}
