package mapping

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/goccy/go-yaml"
	"github.com/google/go-cmp/cmp"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// compileSchema compiles JSONSchema. The compiler checks it against the
// meta-schema of the draft its $schema names.
func compileSchema(t testing.TB) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(JSONSchema))
	if err != nil {
		t.Fatalf("mapping.schema.json: %v", err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("mapping.schema.json", doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile("mapping.schema.json")
	if err != nil {
		t.Fatalf("mapping.schema.json does not compile: %v", err)
	}
	return sch
}

// yamlValue decodes the first YAML document of data into the value an
// editor validates: maps with string keys, lists, strings, numbers,
// booleans and nil. A UTF-8 byte order mark is dropped, as Parse drops it.
func yamlValue(data []byte) (any, error) {
	var v any
	err := yaml.Unmarshal(bytes.TrimPrefix(data, []byte("\ufeff")), &v)
	return v, err
}

// validateYAML validates the first YAML document of data against sch.
func validateYAML(sch *jsonschema.Schema, data []byte) error {
	v, err := yamlValue(data)
	if err != nil {
		return fmt.Errorf("yaml: %w", err)
	}
	return sch.Validate(v)
}

// schemaDoc is mapping.schema.json decoded, for the tests that read it.
type schemaDoc map[string]any

func readSchemaDoc(t testing.TB) schemaDoc {
	t.Helper()
	var d schemaDoc
	if err := json.Unmarshal(JSONSchema, &d); err != nil {
		t.Fatal(err)
	}
	return d
}

// at returns the value at the path of object keys, or nil.
func (d schemaDoc) at(path ...string) any {
	var v any = map[string]any(d)
	for _, k := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

// pattern compiles the pattern at path (with Go's regexp, as the
// validator does).
func (d schemaDoc) pattern(t testing.TB, path ...string) *regexp.Regexp {
	t.Helper()
	s, ok := d.at(path...).(string)
	if !ok {
		t.Fatalf("no pattern at %v", path)
	}
	return regexp.MustCompile(s)
}

func TestSchemaDraft(t *testing.T) {
	compileSchema(t)
	if got, want := readSchemaDoc(t).at("$schema"), "https://json-schema.org/draft/2020-12/schema"; got != want {
		t.Errorf("$schema = %v, want %s", got, want)
	}
}

// repoRoot is the module's root, where go.mod is.
const repoRoot = ".."

// annotatedDirs hold the mappings that start with the yaml-language-server
// line naming the schema by a relative path.
var annotatedDirs = []string{"fixtures", "examples"}

// requiredMappings must be among the mappings shippedMappings finds, so
// that a broken walk cannot pass with fewer.
var requiredMappings = []string{
	"examples/northwind/mapping.yaml",
	"fixtures/mappings/attendance.yaml",
	"fixtures/mappings/customers.yaml",
	"fixtures/mappings/tickets.yaml",
	"fixtures/mappings/strategies/attendance.yaml",
	"fixtures/mappings/strategies/customers.yaml",
	"fixtures/mappings/strategies/tickets.yaml",
	"follow/testdata/attendance-mirror.yaml",
	"mapping/testdata/valid.yaml",
}

// notShipped are YAML files with "entities" that are broken on purpose.
var notShipped = []string{"mapping/testdata/bad", "mapping/testdata/invalid.yaml"}

// shippedMappings returns the mapping files of the repository, relative
// to its root: every *.yaml and *.yml whose top level holds "entities",
// outside notShipped, hidden directories and node_modules. Other YAML
// (docker-compose.yml, the Kubernetes manifests of examples/) is left out.
func shippedMappings(t *testing.T) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(repoRoot, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(repoRoot, path)
		rel = filepath.ToSlash(rel)
		if slices.Contains(notShipped, rel) {
			return skip(d)
		}
		if d.IsDir() {
			if rel != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if ext := filepath.Ext(path); ext != ".yaml" && ext != ".yml" {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if v, err := yamlValue(data); err == nil {
			if m, ok := v.(map[string]any); ok && m[KeyEntities] != nil {
				out = append(out, rel)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range requiredMappings {
		if !slices.Contains(out, want) {
			t.Errorf("the walk from %s did not find %s; found %v", repoRoot, want, out)
		}
	}
	return out
}

func skip(d fs.DirEntry) error {
	if d.IsDir() {
		return filepath.SkipDir
	}
	return nil
}

// TestSchemaAcceptsShippedMappings validates every mapping file of the
// repository, each of which Load accepts, and checks the first line of
// those under annotatedDirs points an editor at the schema.
func TestSchemaAcceptsShippedMappings(t *testing.T) {
	sch := compileSchema(t)
	files := shippedMappings(t)
	if len(files) < len(requiredMappings) {
		t.Fatalf("found %d mappings, want at least %d", len(files), len(requiredMappings))
	}
	for _, rel := range files {
		t.Run(rel, func(t *testing.T) {
			path := filepath.Join(repoRoot, rel)
			if _, err := Load(path); err != nil {
				t.Fatalf("Load: %v", err)
			}
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if err := validateYAML(sch, data); err != nil {
				t.Errorf("schema: %v", err)
			}
			if slices.Contains(annotatedDirs, strings.Split(rel, "/")[0]) {
				checkModeline(t, path, data)
			}
		})
	}
}

// checkModeline checks the first line of the mapping at path is
// "# yaml-language-server: $schema=REL" with REL the schema's path
// relative to the mapping's directory.
func checkModeline(t *testing.T, path string, data []byte) {
	t.Helper()
	first, _, _ := bytes.Cut(data, []byte("\n"))
	rel, ok := strings.CutPrefix(string(first), "# yaml-language-server: $schema=")
	if !ok {
		t.Errorf("first line %q: want %q", first, "# yaml-language-server: $schema=<path of mapping/mapping.schema.json>")
		return
	}
	got, err := filepath.Abs(filepath.Join(filepath.Dir(path), filepath.FromSlash(rel)))
	if err != nil {
		t.Fatal(err)
	}
	want, err := filepath.Abs("mapping.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Errorf("$schema=%s is %s, want the path of %s", rel, got, want)
	}
}

// beyondSchema are the bad mappings of testdata/bad the schema cannot
// refuse, each with the reason. The schema sees one YAML document as data
// and checks each value against the rules of its place in the file; it
// cannot compare values with each other, follow a name to what it names or
// read the YAML text. TestSchemaRejectsBadMappings refuses a case of this
// list that the schema does refuse, so the list stays exact.
var beyondSchema = map[string]string{
	// Not YAML, or YAML the data does not show.
	"bad-indentation.yaml":       "not YAML: there is no data to validate",
	"unclosed-double-quote.yaml": "not YAML: there is no data to validate",
	"unclosed-flow-mapping.yaml": "not YAML: there is no data to validate",
	"duplicate-entity.yaml":      "a key twice is refused by the YAML parser: there is no data to validate",
	"second-yaml-document.yaml":  "a schema validates one document; an editor validates each on its own",
	"null-entity-name.yaml":      `the null key ~ decodes as the text "null", a valid entity name`,
	"merge-key.yaml":             "the YAML decoder merges a merge key (<<) into its mapping; Load refuses it as an unknown key",

	// A name that must match a declaration elsewhere in the file.
	"index-naming-an-undeclared-gsi.yaml": "an entity's indexes must name GSIs of table.gsis",
	"index-without-any-gsi-declared.yaml": "an entity's indexes must name GSIs of table.gsis",
	"pattern-on-an-unknown-index.yaml":    "an access pattern's index must name a GSI of table.gsis",

	// A rule that depends on the GSI an entity's index names.
	"index-sk-on-a-gsi-without-sort-key.yaml":           "whether an index takes an sk template depends on its GSI's sort_key",
	"index-template-for-a-table-key-attribute.yaml":     "whether an index takes a template depends on its GSI's key attributes",
	"index-missing-its-pk-template.yaml":                "whether an index needs a pk template depends on its GSI's key attributes",
	"pattern-on-the-wrong-key.yaml":                     "the key condition's attributes must be the key attributes of its table or GSI",
	"sort-condition-on-a-table-without-a-sort-key.yaml": "the key condition's attributes must be the key attributes of its table or GSI",

	// Two values compared.
	"sort-key-equal-to-partition-key.yaml":           "the table's sort_key must differ from its partition_key",
	"gsi-sort-key-is-its-partition-key.yaml":         "a GSI's sort_key must differ from its partition_key",
	"duplicate-gsi-name.yaml":                        "GSI names must differ; uniqueItems compares whole items",
	"type-attribute-is-the-partition-key.yaml":       "type_attribute must not be a key attribute of the table or a GSI",
	"rename-to-the-partition-key-attribute.yaml":     "a rename must not name a key attribute",
	"rename-to-a-gsi-key-or-the-type-attribute.yaml": "a rename must not name a key attribute or the type attribute",
	"set-of-an-excluded-column.yaml":                 "sets must not list a column exclude lists",
	"set-of-a-column-not-selected.yaml":              "sets must list columns select lists",
	"embed-list-element-set-not-selected.yaml":       "sets must list columns select lists",
	"duplicate-set-excluded.yaml":                    "sets must not list a column exclude lists",

	// Multi-attribute GSI keys and library presets.
	"multi-attribute-key-clashes.yaml":                       "a key attribute is compared with the string key attributes, the type attribute, its index's others and other indexes' types",
	"templates-and-patterns-on-a-multi-attribute-index.yaml": "whether an entity's indexes or a pattern may name a GSI depends on that GSI's kind of keys",
	"onetable-key-columns-not-on-the-item.yaml":              "key placeholders are compared with the attributes the entity writes",
	"electrodb-keys-in-another-format.yaml":                  "key templates are compared with the keys ElectroDB renders from the service, the entity type and the attributes",
	"library-with-two-entities-of-one-type.yaml":             "entity types must differ",

	// Text the template grammar allows.
	"braces-instead-of-placeholders.yaml": "{name} is literal text in the grammar the template pattern follows; Load refuses it as another tool's placeholder",
}

// TestSchemaRejectsBadMappings checks the schema refuses every bad mapping
// of testdata/bad that Load refuses for its shape (an unknown key, a wrong
// type, a bad value or template, a missing key), and that it reports a
// problem where Load does: at the path of one of Load's errors, or above
// or below it. The cases of beyondSchema are refused by Load alone.
func TestSchemaRejectsBadMappings(t *testing.T) {
	sch := compileSchema(t)
	cases := badCases(t)
	// testdata/invalid.yaml: a table name too short, an unclosed "${".
	cases = append(cases, badCase{name: "invalid.yaml", path: "testdata/invalid.yaml",
		want: []string{"invalid.yaml:3:9: table.name: x", "invalid.yaml:8:15: entities.Order.sk: x"}})
	var names []string
	for _, c := range cases {
		names = append(names, c.name)
		t.Run(strings.TrimSuffix(c.name, ".yaml"), func(t *testing.T) {
			data, err := os.ReadFile(c.path)
			if err != nil {
				t.Fatal(err)
			}
			v, yerr := yamlValue(data)
			reason, beyond := beyondSchema[c.name]
			switch {
			case beyond && yerr != nil:
				return
			case beyond:
				if err := sch.Validate(v); err != nil {
					t.Errorf("listed in beyondSchema (%s), but the schema refuses it:\n%v", reason, err)
				}
				return
			case yerr != nil:
				t.Fatalf("not YAML (%v): list it in beyondSchema", yerr)
			}
			err = sch.Validate(v)
			if err == nil {
				t.Fatalf("the schema accepts it; Load reports:\n%s", strings.Join(c.want, "\n"))
			}
			if !sameProblem(err, c.want) {
				t.Errorf("the schema reports no problem at or around Load's paths:\nLoad:\n%s\nschema:\n%v", strings.Join(c.want, "\n"), err)
			}
		})
	}
	for name := range beyondSchema {
		if !slices.Contains(names, name) {
			t.Errorf("beyondSchema lists %s, which is not in testdata/bad", name)
		}
	}
}

// loadErrorPath matches the path of a Load error line: "file:3:9: a.b: …"
// or "file: a.b: …".
var loadErrorPath = regexp.MustCompile(`^[^:]+(?::\d+:\d+)?: ([A-Za-z0-9_.\[\]-]+): `)

// sameProblem reports whether some leaf of the schema's error is located
// at, above or below the path of one of Load's errors (want, as the
// comments of testdata/bad write them). A Load error without a path (an
// empty file) matches any.
func sameProblem(err error, want []string) bool {
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return false
	}
	var loadPaths [][]string
	for _, w := range want {
		m := loadErrorPath.FindStringSubmatch(w)
		if m == nil {
			return true
		}
		loadPaths = append(loadPaths, strings.FieldsFunc(m[1], func(r rune) bool { return r == '.' || r == '[' || r == ']' }))
	}
	for _, leaf := range leaves(ve) {
		for _, lp := range loadPaths {
			n := min(len(lp), len(leaf.InstanceLocation))
			if slices.Equal(lp[:n], leaf.InstanceLocation[:n]) {
				return true
			}
		}
	}
	return false
}

// leaves returns the errors of ve that have no causes.
func leaves(ve *jsonschema.ValidationError) []*jsonschema.ValidationError {
	if len(ve.Causes) == 0 {
		return []*jsonschema.ValidationError{ve}
	}
	var out []*jsonschema.ValidationError
	for _, c := range ve.Causes {
		out = append(out, leaves(c)...)
	}
	return out
}

// schemaNodes returns node and every schema that applies to the same
// value alongside it: what it $refs ("#/$defs/…") and the branches of its
// allOf, anyOf and oneOf, recursively.
func (d schemaDoc) schemaNodes(node map[string]any) []map[string]any {
	if node == nil {
		return nil
	}
	out := []map[string]any{node}
	if ref, ok := node["$ref"].(string); ok {
		target, _ := d.at(strings.Split(strings.TrimPrefix(ref, "#/"), "/")...).(map[string]any)
		out = append(out, d.schemaNodes(target)...)
	}
	for _, k := range []string{"allOf", "anyOf", "oneOf"} {
		branches, _ := node[k].([]any)
		for _, b := range branches {
			bm, _ := b.(map[string]any)
			out = append(out, d.schemaNodes(bm)...)
		}
	}
	return out
}

// union merges the objects under key in the nodes (properties, or the one
// schema of items or additionalProperties, given as {"": schema}).
func (d schemaDoc) union(nodes []map[string]any, key string) map[string]map[string]any {
	out := map[string]map[string]any{}
	for _, n := range nodes {
		switch v := n[key].(type) {
		case map[string]any:
			if key != "properties" {
				out[""] = v
				continue
			}
			for name, p := range v {
				pm, _ := p.(map[string]any)
				out[name] = pm
			}
		}
	}
	return out
}

// jsonTypes returns the JSON types the nodes allow (their "type", or the
// types of their enum values).
func jsonTypes(nodes []map[string]any) []string {
	var out []string
	for _, n := range nodes {
		switch v := n["type"].(type) {
		case string:
			out = append(out, v)
		case []any:
			for _, s := range v {
				out = append(out, s.(string))
			}
		}
		if enum, ok := n["enum"].([]any); ok {
			for _, e := range enum {
				switch e.(type) {
				case string:
					out = append(out, "string")
				case float64:
					out = append(out, "integer")
				}
			}
		}
	}
	return out
}

// schemaWalk holds the schema and the problems found while walking the Go
// types of the mapping file along it.
type schemaWalk struct {
	d    schemaDoc
	errs []string
}

func (w *schemaWalk) errorf(format string, args ...any) {
	w.errs = append(w.errs, fmt.Sprintf(format, args...))
}

// yamlKey returns the YAML key of a struct field: its yaml tag's name, ""
// for none ("-", or an unexported field).
func yamlKey(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
	if name == "-" || !f.IsExported() {
		return ""
	}
	return name
}

// walk checks the schema node, at path, describes Go type typ as Load
// decodes it: a struct's yaml keys as properties (and, with exact, no
// other property, and additionalProperties false), a map's values, a
// list's items, and a scalar's JSON type.
func (w *schemaWalk) walk(typ reflect.Type, node map[string]any, path string, exact bool) {
	for typ.Kind() == reflect.Pointer {
		typ = typ.Elem()
	}
	nodes := w.d.schemaNodes(node)
	switch typ.Kind() {
	case reflect.Struct:
		w.walkStruct(typ, nodes, path, exact)
	case reflect.Map:
		w.walk(typ.Elem(), w.d.union(nodes, "additionalProperties")[""], path+".*", true)
	case reflect.Slice:
		w.walk(typ.Elem(), w.d.union(nodes, "items")[""], path+"[]", true)
	default:
		want := map[reflect.Kind]string{reflect.String: "string", reflect.Bool: "boolean", reflect.Int: "integer", reflect.Int64: "integer"}[typ.Kind()]
		if want == "" {
			w.errorf("%s: Go type %s: the test does not know its JSON type", path, typ)
		} else if !slices.Contains(jsonTypes(nodes), want) {
			w.errorf("%s: Go type %s, but the schema allows %v", path, typ, jsonTypes(nodes))
		}
	}
}

func (w *schemaWalk) walkStruct(typ reflect.Type, nodes []map[string]any, path string, exact bool) {
	props := w.d.union(nodes, "properties")
	var keys []string
	for i := range typ.NumField() {
		f := typ.Field(i)
		key := yamlKey(f)
		switch {
		case key == "" && f.IsExported() && f.Tag.Get("yaml") == "":
			w.errorf("%s: field %s.%s has no yaml tag", path, typ.Name(), f.Name)
		case key == "":
		case props[key] == nil:
			w.errorf("%s.%s: key of %s.%s is not described by the schema", path, key, typ.Name(), f.Name)
		default:
			keys = append(keys, key)
			w.walk(f.Type, props[key], strings.TrimPrefix(path+"."+key, "."), true)
		}
	}
	if !exact {
		return
	}
	for _, name := range slices.Sorted(maps.Keys(props)) {
		if !slices.Contains(keys, name) {
			w.errorf("%s.%s: described by the schema, but %s has no field with that yaml key", path, name, typ.Name())
		}
	}
	if !slices.ContainsFunc(nodes, func(n map[string]any) bool { return n["additionalProperties"] == false }) {
		w.errorf("%s: %s is decoded strictly, but the schema does not set additionalProperties: false", path, typ.Name())
	}
}

// TestSchemaDescribesEveryKey walks the types Load decodes a mapping file
// into (the file struct, and Mapping's own fields) along the schema and
// fails naming any yaml key the schema does not describe, any property it
// describes that no field has, and any scalar whose JSON type differs. The
// schema is generated from these types (tools/schemagen), so this
// checks the generator: that it reflects the file struct Load decodes,
// not only Mapping, and that its rules replace no key's type.
func TestSchemaDescribesEveryKey(t *testing.T) {
	w := &schemaWalk{d: readSchemaDoc(t)}
	root := map[string]any(w.d)
	w.walk(reflect.TypeOf(file{}), root, "", true)
	// Mapping's fields are file's, bar the entities and access patterns
	// it holds in order: not exact.
	w.walk(reflect.TypeOf(Mapping{}), root, "", false)
	for _, e := range w.errs {
		t.Error(e)
	}
}

// TestSchemaEnums checks the schema's enums are the values Load accepts,
// as the constants of this package name them (the empty value each enum
// also allows, null, is "left out"), and that they sit where the
// generator's tests below look for them.
func TestSchemaEnums(t *testing.T) {
	d := readSchemaDoc(t)
	tests := []struct {
		path []string
		want []any
	}{
		{[]string{"properties", "version"}, []any{1.0}},
		{[]string{"$defs", "table", "properties", "billing_mode"}, []any{PayPerRequest, Provisioned}},
		{[]string{"$defs", "gsi", "properties", "projection"}, []any{ProjectAll, ProjectKeysOnly, ProjectInclude}},
		{[]string{"$defs", "embed", "properties", "as"}, []any{EmbedList, EmbedMap, EmbedSet}},
		{[]string{"$defs", "aggregate", "properties", "function"}, []any{AggCount, AggSum, AggMin, AggMax}},
		{[]string{"$defs", "stableID", "properties", "kind"}, []any{IDKSUID, IDULID}},
		{[]string{"$defs", "keyAttribute", "properties", "type"}, []any{TypeString, TypeNumber, TypeBinary}},
		{[]string{"$defs", "library", "properties", "name"}, []any{LibraryOneTable, LibraryElectroDB, LibraryToolbox}},
	}
	for _, tt := range tests {
		enum, ok := d.at(append(tt.path, "enum")...).([]any)
		if !ok {
			t.Errorf("%v: no enum", tt.path)
			continue
		}
		enum = slices.DeleteFunc(enum, func(v any) bool { return v == nil })
		if d := cmp.Diff(tt.want, enum); d != "" {
			t.Errorf("%v: enum (-want +got):\n%s", tt.path, d)
		}
	}
}

// TestSchemaDescribesEveryProperty checks every property the schema
// declares carries a description (its own or that of the definition it
// refers to), for editors to show. The if/then/else and allOf branches,
// which restate properties to constrain them, are not declarations.
func TestSchemaDescribesEveryProperty(t *testing.T) {
	d := readSchemaDoc(t)
	var visit func(node map[string]any, path string)
	visit = func(node map[string]any, path string) {
		props, _ := node["properties"].(map[string]any)
		// Properties of the definition node refers to, restated beside
		// the $ref to constrain them, are declared there.
		var declared map[string]map[string]any
		if ref, ok := node["$ref"].(string); ok {
			declared = d.union(d.schemaNodes(map[string]any{"$ref": ref}), "properties")
		}
		for _, name := range slices.Sorted(maps.Keys(props)) {
			p := props[name].(map[string]any)
			if declared[name] != nil {
				continue
			}
			if !slices.ContainsFunc(d.schemaNodes(p), func(n map[string]any) bool { return n["description"] != nil }) {
				t.Errorf("%s.%s: no description", path, name)
			}
			visit(p, path+"."+name)
		}
		for _, k := range []string{"items", "additionalProperties"} {
			if sub, ok := node[k].(map[string]any); ok {
				visit(sub, path+"/"+k)
			}
		}
	}
	visit(map[string]any(d), "")
	defs, _ := d["$defs"].(map[string]any)
	for _, name := range slices.Sorted(maps.Keys(defs)) {
		visit(defs[name].(map[string]any), "$defs."+name)
	}
}

// TestSchemaAcceptsEmptyValues checks the schema, like Load, reads an
// optional key written with no value as the key left out.
func TestSchemaAcceptsEmptyValues(t *testing.T) {
	const doc = `version:
type_attribute:
library:
table:
  name: shop
  partition_key:
  sort_key:
  billing_mode:
  read_capacity:
  write_capacity:
  warm_throughput:
  max_read_request_units:
  max_write_request_units:
  point_in_time_recovery: {enabled: , recovery_period_in_days: }
  deletion_protection:
  gsis:
    - {name: Inverted, partition_key: SK, sort_key: PK, partition_keys: , sort_keys: , projection: , non_key_attributes: , read_capacity: , write_capacity: }
    - {name: Warm, partition_key: W, warm_throughput: {read_units_per_second: 1, write_units_per_second: }, max_read_request_units: , max_write_request_units: }
entities:
  A:
    source: {schema: , table: a, query: }
    pk: A#${id}
    sk: A
    indexes: {Inverted: }
    type:
    attributes:
    embed:
    duplicate:
    aggregates:
    ids:
    mirror:
  B:
    source: {table: b}
    pk: B#${id}
    sk: B
    indexes: {Inverted: {pk: , sk: , sparse: }}
    attributes: {select: , exclude: , rename: , sets: }
    embed:
      kids: {source: {table: k, query: }, join: {b_id: id}, as: , key: , order_by: , max_items: , attributes: }
    aggregates:
      n: {function: count, column: , source: {query: SELECT 1 AS b_id, table: }, join: {b_id: id}}
access_patterns:
  P: {description: , index: , key_condition: "PK = B#${id}", scan_forward: }
`
	if _, err := Parse("m.yaml", []byte(doc)); err != nil {
		t.Fatalf("Parse: %v", err)
	}
	if err := validateYAML(compileSchema(t), []byte(doc)); err != nil {
		t.Errorf("schema: %v", err)
	}
	if err := validateYAML(compileSchema(t), []byte("table: {name: shop}\nentities: {A: {source: {table: a}, pk: A, sk: A}}\naccess_patterns:\n")); err != nil {
		t.Errorf("schema, access_patterns with no value: %v", err)
	}
}

// TestSchemaStricterThanLoad lists, one example each, the mappings Load
// accepts and the schema refuses on purpose (the schema's $comment says
// the same). Should Load come to refuse one, drop it here.
func TestSchemaStricterThanLoad(t *testing.T) {
	const head = "table: {name: shop, gsis: [{name: GSI1, partition_key: G1}]}\nentities:\n  A:\n    source: {table: a}\n    pk: A#${id}\n    sk: A\n"
	const embed = head + "    embed:\n      kids: "
	tests := []struct{ name, yaml string }{
		// The documented scalar types: Load's decoder converts.
		{"a number for a string", "table: {name: 123}\nentities: {A: {source: {table: a}, pk: A, sk: A}}\n"},
		{"a boolean for a string", head + "    type: true\n"},
		{"a quoted number for a whole number", "version: \"1\"\n" + head},
		// An enum written empty: Load reads the default.
		{"billing_mode empty", "table: {name: shop, billing_mode: ''}\nentities: {A: {source: {table: a}, pk: A, sk: A}}\n"},
		{"projection empty", "table: {name: shop, gsis: [{name: GSI1, partition_key: G1, projection: ''}]}\nentities: {A: {source: {table: a}, pk: A, sk: A}}\n"},
		{"as empty", embed + "{source: {table: k}, join: {a_id: id}, as: ''}\n"},
		{"library empty", "library: ''\n" + head},
		// Empty names: Load leaves them to the database check, or DynamoDB.
		{"an empty join column", embed + "{source: {table: k}, join: {a_id: ''}}\n"},
		{"an empty embed attribute name", head + "    embed:\n      '': {source: {table: k}, join: {a_id: id}}\n"},
		{"an empty renamed column", head + "    attributes: {rename: {'': x}}\n"},
		{"an empty from column", head + "    ids:\n      uid: {kind: ulid, time: t, from: ['']}\n"},
		{"an empty non-key attribute", "table: {name: shop, gsis: [{name: GSI1, partition_key: G1, projection: INCLUDE, non_key_attributes: ['']}]}\nentities: {A: {source: {table: a}, pk: A, sk: A}}\n"},
	}
	sch := compileSchema(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := Parse("m.yaml", []byte(tt.yaml)); err != nil {
				t.Fatalf("Parse refuses it now; drop the case: %v", err)
			}
			if err := validateYAML(sch, []byte(tt.yaml)); err == nil {
				t.Errorf("the schema accepts it")
			}
		})
	}
}

// corpusStrings returns the string values of the seed corpus of fuzz test
// name under testdata/fuzz (see TestFuzzCorpusFormat).
func corpusStrings(t testing.TB, name string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "fuzz", name, "*"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		_, v, _ := strings.Cut(strings.TrimSpace(string(data)), "\nstring(")
		s, err := strconv.Unquote(strings.TrimSuffix(v, ")"))
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		out = append(out, s)
	}
	return out
}

// templateSeeds are key templates, valid and not, for the template
// pattern: TestParseTemplate's and TestParseTemplateErrors' kinds, and
// the edges of the pattern (Unicode spaces, which strings.TrimSpace
// strips, widths written with zeros, "$" before and after placeholders).
var templateSeeds = []string{
	"", "ORDER", "ORDER#${order_id}", "C#${a}#O#${b}", "${a}${b}", "${id:8}", "${id:0}", "${id:64}",
	"${ id : 8 }", "$$", "$${id}", "$", "$x", "a$", "$$$", "$$${a}", "${a}$", "}${a}}", "{a}", "$}",
	"Ü#${naïve}", "${a$}", "${$}", "${$$}", "${a$b}", "${a:064}", "${a:0000000000000000000000064}",
	"ORDER#${order_id", "${a}#${", "$$${a", "${}", "A#${ }", "${:3}", "${ id : x }", "${id:65}",
	"K#${id:-1}", "${id:}", "${id:1:2}", "${a${b}}", "${x}#${a#${b}", "${}${", "${id:+8}",
	"${id:99999999999999999999}", "${id:640}", "${ \u00a0}", "${\u3000a\u3000:\u20288\u2029}",
	"${\u0085}", "${\u200b}", "${a\n}", "${\t:\t1}", "${a:6 4}", "${a{b}", "${{}", "$${}", "$$${}",
}

// TestTemplatePattern checks the schema's key template pattern accepts
// exactly the templates ParseTemplate parses.
func TestTemplatePattern(t *testing.T) {
	re := readSchemaDoc(t).pattern(t, "$defs", "template", "pattern")
	for _, s := range slices.Concat(templateSeeds, corpusStrings(t, "FuzzParseTemplate")) {
		_, err := ParseTemplate(s)
		if got := re.MatchString(s); got != (err == nil) {
			t.Errorf("%q: pattern matches %v, ParseTemplate error %v", s, got, err)
		}
	}
}

func FuzzTemplatePattern(f *testing.F) {
	re := readSchemaDoc(f).pattern(f, "$defs", "template", "pattern")
	for _, s := range slices.Concat(templateSeeds, corpusStrings(f, "FuzzParseTemplate")) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !utf8.ValidString(s) {
			t.Skip("YAML text is UTF-8")
		}
		_, err := ParseTemplate(s)
		if got := re.MatchString(s); got != (err == nil) {
			t.Fatalf("%q: pattern matches %v, ParseTemplate error %v", s, got, err)
		}
	})
}

var orderSeeds = []string{
	"a", "a DESC", "a desc", "a asc", "a ASC", "a  DESC ", " a", "\ta\n", "a b", "a DESC x", "", " ",
	"a\u00a0DESC", "a\u3000asc", "a deſc", "a DEſC", "a aſc", "a DES", "a DESCENDING", "a\u200bDESC", "DESC",
	"id sideways",
}

// TestOrderPattern checks the schema's order_by pattern accepts exactly
// the entries ParseOrder parses.
func TestOrderPattern(t *testing.T) {
	re := readSchemaDoc(t).pattern(t, "$defs", "embed", "properties", "order_by", "items", "pattern")
	for _, s := range orderSeeds {
		_, err := ParseOrder(s)
		if got := re.MatchString(s); got != (err == nil) {
			t.Errorf("%q: pattern matches %v, ParseOrder error %v", s, got, err)
		}
	}
}

func FuzzOrderPattern(f *testing.F) {
	re := readSchemaDoc(f).pattern(f, "$defs", "embed", "properties", "order_by", "items", "pattern")
	for _, s := range orderSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !utf8.ValidString(s) {
			t.Skip("YAML text is UTF-8")
		}
		_, err := ParseOrder(s)
		if got := re.MatchString(s); got != (err == nil) {
			t.Fatalf("%q: pattern matches %v, ParseOrder error %v", s, got, err)
		}
	})
}

// keyConditionSeeds are key conditions ParseKeyCondition parses: its
// test's, and the corners of its lexer (quoted tokens anywhere, "${…}"
// holding spaces, tokens without spaces between).
var keyConditionSeeds = []string{
	"PK = USER#${id}", "PK = USER#${id} AND SK = PROFILE", "GSI1PK = ORG#${o} and begins_with(GSI1SK, TICKET#)",
	"PK = A AND SK BETWEEN '2024-01' AND '2024-12'", "PK = A AND SK >= ${t}", "PK=A AND SK<${t}",
	"PK = 'CITY#New York' AND begins_with(SK, 'ZIP (old), #')", "PK = A AND begins_with(SK, '')",
	"PK = A AND SK BETWEEN '2024-01-01 00:00' AND '2024-12-31 23:59'", "'PK' = A", "PK = 'A' 'AND' SK = B",
	"PK = ${ a }", "PK = A$${x y}", "PK = $", "PK = A$ AND SK = $$", "PK = A AND BEGINS_WITH ( SK , B )",
	"( = A", "= = A", "PK = A AND SK = ''", "\tPK\n=\tA\n", "PK = A AND 'SK' <= B", "PK = ${a'b}",
	"PK = 'A$${x' AND SK = B", "PK = A AND beginſ_with(SK, B)", "PK = A AND SK = ${x:0}",
	"a = A AND b = ${b} AND c >= 3", "a = 'x y' and 'b' = B AND c = C AND begins_with(d, '')", "a=A AND b=B AND c BETWEEN 1 AND 2",
}

// badKeyConditions are refused by ParseKeyCondition, for their shape, and
// by the schema's pattern.
var badKeyConditions = []string{
	"", "PK", "PK =", "= A", "PK = ''", "PK = A AND", "PK = A AND SK LIKE B", "PK = 'A", "PK = A OR SK = B",
	"PK = A AND begins_with(SK, B", "PK = A AND begins_with(SK B)", "PK = A#${id", "PK = ${}", "PK = A AND SK = ${}",
	"PK = A AND SK = B C", "PK = A AND SK BETWEEN B", "PK = A AND SK = ", "PK = A = B", "PK = A AND SK = (B)",
	"PK = A AND SK <> B", "PK = A AND SK == B",
}

// TestKeyConditionPattern checks the schema's key condition pattern
// accepts every condition ParseKeyCondition parses and refuses malformed
// ones. It accepts a few ParseKeyCondition refuses: a tokens' spacing it
// cannot see ("PK = AANDSK = B", read as one word), and the syntax of
// templates inside conditions in a few corners.
func TestKeyConditionPattern(t *testing.T) {
	re := readSchemaDoc(t).pattern(t, "$defs", "accessPattern", "properties", "key_condition", "pattern")
	for _, s := range keyConditionSeeds {
		if _, err := ParseKeyCondition(s); err != nil {
			t.Errorf("seed %q: %v", s, err)
		} else if !re.MatchString(s) {
			t.Errorf("%q: ParseKeyCondition parses it, the pattern does not match", s)
		}
	}
	for _, s := range badKeyConditions {
		if _, err := ParseKeyCondition(s); err == nil {
			t.Errorf("bad seed %q: ParseKeyCondition parses it", s)
		}
		if re.MatchString(s) {
			t.Errorf("%q: the pattern matches", s)
		}
	}
}

// TestKeyConditionPatternGenerated builds key conditions from their
// pieces (names, quoted or not, templates, operators, spacing) and checks
// the pattern matches each that ParseKeyCondition parses: random text, as
// the fuzzer makes, seldom parses.
func TestKeyConditionPatternGenerated(t *testing.T) {
	re := readSchemaDoc(t).pattern(t, "$defs", "accessPattern", "properties", "key_condition", "pattern")
	r := rand.New(rand.NewPCG(1, 2))
	pick := func(s ...string) string { return s[r.IntN(len(s))] }
	space := func() string { return pick("", " ", "  ", "\t", "\n ") }
	tpl := func() string {
		t := pick("A", "USER#${id}", "${a}#${b:8}", "$$", "A$", "${ x }", "2024-", "$${y}", "#", "${a}$${b}")
		if r.IntN(3) == 0 {
			t = "'" + pick(t, "", "a b", "(x), y", "${ a b }") + "'"
		}
		return t
	}
	attr := func() string { return pick("PK", "SK", "GSI1PK", "'PK'", "'a b'", "=", "(") }
	valid := 0
	for range 4000 {
		s := space() + attr() + space() + "=" + space() + tpl()
		for range r.IntN(3) { // a multi-attribute key's equalities
			s += space() + " " + pick("AND", "and", "'AND'") + " " + space() + attr() + space() + "=" + space() + tpl()
		}
		if r.IntN(4) > 0 {
			s += space() + " " + pick("AND", "and", "'AND'") + " " + space()
			switch r.IntN(3) {
			case 0:
				s += pick("begins_with", "BEGINS_WITH") + space() + "(" + space() + attr() + space() + "," + space() + tpl() + space() + ")"
			case 1:
				s += attr() + " " + space() + pick("BETWEEN", "between") + " " + space() + tpl() + " " + space() + pick("AND", "and") + " " + space() + tpl()
			default:
				s += attr() + space() + pick("=", "<", "<=", ">", ">=") + space() + tpl()
			}
		}
		s += space()
		if _, err := ParseKeyCondition(s); err != nil {
			continue
		}
		valid++
		if !re.MatchString(s) {
			t.Fatalf("%q: ParseKeyCondition parses it, the pattern does not match", s)
		}
	}
	if valid < 1000 {
		t.Errorf("only %d of 4000 generated conditions parse", valid)
	}
}

func FuzzKeyConditionPattern(f *testing.F) {
	re := readSchemaDoc(f).pattern(f, "$defs", "accessPattern", "properties", "key_condition", "pattern")
	for _, s := range slices.Concat(keyConditionSeeds, badKeyConditions) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !utf8.ValidString(s) {
			t.Skip("YAML text is UTF-8")
		}
		if _, err := ParseKeyCondition(s); err == nil && !re.MatchString(s) {
			t.Fatalf("%q: ParseKeyCondition parses it, the pattern does not match", s)
		}
	})
}

// TestSchemaNamePatterns checks the schema's name patterns are Load's.
func TestSchemaNamePatterns(t *testing.T) {
	d := readSchemaDoc(t)
	for _, tt := range []struct {
		path []string
		want string
	}{
		{[]string{"$defs", "tableName", "pattern"}, tableNameRE.String()},
		{[]string{"properties", "entities", "propertyNames", "pattern"}, entityNameRE.String()},
		{[]string{"$defs", "entity", "properties", "indexes", "propertyNames", "pattern"}, tableNameRE.String()},
	} {
		if got := d.at(tt.path...); got != tt.want {
			t.Errorf("%v = %v, want %q", tt.path, got, tt.want)
		}
	}
}
