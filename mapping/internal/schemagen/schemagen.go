// Package schemagen generates mapping.schema.json, the JSON Schema of the
// mapping file, from the Go types Load decodes it into: the structs are the
// source of the keys, their types and their descriptions (the fields' doc
// comments), and this package adds what a struct cannot say (enums,
// defaults, patterns, bounds, and the rules within one mapping that Load
// checks in code). `go generate ./mapping` runs it; a test of the mapping
// package fails when the committed file differs from its output.
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

// pkgPath is the import path of the mapping package, whose types'
// comments become descriptions.
const pkgPath = "github.com/pg2dynamo/pg2dynamo/mapping"

// Generate returns the schema as mapping.schema.json holds it: JSON
// indented by two spaces, keys in a fixed order (properties in struct
// field order, keywords in jsonschema.Schema's field order, extra keywords
// sorted), with a final newline. srcDir is the directory of the mapping
// package's Go source, read for the doc comments. An error is a source
// that does not parse, or a rule naming a key the structs do not have.
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

// goComments returns the doc comments of the mapping package's types and
// fields under srcDir, keyed as jsonschema.Reflector.CommentMap wants
// ("<import path>.Type.Field"), each one paragraph per blank-line-separated
// block with its lines joined, as an editor shows it.
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

// fileFields adds to Mapping the two keys of the file it holds in another
// form (Entities and AccessPatterns are slices in file order, decoded from
// maps by name): the fields of the file struct Load decodes.
func fileFields(t reflect.Type) []reflect.StructField {
	if t != reflect.TypeFor[mapping.Mapping]() {
		return nil
	}
	return []reflect.StructField{
		{Name: "Entities", Type: reflect.TypeFor[map[string]*mapping.Entity](), Tag: `yaml:"entities"`},
		{Name: "AccessPatterns", Type: reflect.TypeFor[map[string]*mapping.AccessPattern](), Tag: `yaml:"access_patterns"`},
	}
}

// unescapeHTML undoes encoding/json's escaping of <, > and & in strings
// (\u003c, \u003e, \u0026), which the patterns are full of. It reads
// escapes pairwise, so an escaped backslash before "u003c" stays as is.
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
