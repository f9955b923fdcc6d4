package mapping

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
	"github.com/goccy/go-yaml/token"
)

// file is the on-disk shape; entities are a map whose order comes from the AST.
type file struct {
	Version        int                       `yaml:"version"`
	Name           string                    `yaml:"name"`
	Table          Table                     `yaml:"table"`
	TypeAttribute  string                    `yaml:"type_attribute"`
	Library        Library                   `yaml:"library"`
	Entities       map[string]*Entity        `yaml:"entities"`
	AccessPatterns map[string]*AccessPattern `yaml:"access_patterns"`
}

// Load reads and parses the mapping file at path. See Parse.
func Load(path string) (*Mapping, error) {
	return LoadContext(context.Background(), path)
}

// LoadContext reads and parses the mapping file at path, as ParseContext.
// It reads at most MaxFileBytes+1 bytes: a larger file (or a device that
// never ends) is refused, as Errors, without being read whole. An error
// reading the file wraps the *fs.PathError.
func LoadContext(ctx context.Context, path string) (*Mapping, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read mapping: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read mapping: %w", err)
	}
	return ParseContext(ctx, path, data)
}

// Parse parses a mapping from data; name is used in error messages. It
// decodes strictly (unknown fields are errors), applies defaults, parses
// every key template and validates the result. On failure the error is
// Errors (one or more *Error, each with file, line, column and path).
// Parse does not look at any database; see transform.Compile for the check
// against the live schema.
//
// Input past the bounds MaxFileBytes, MaxMappingKeys, MaxDepth and
// MaxAliasNodes is refused with one *Error naming the bound, before the
// YAML parser (for size, keys and depth) or the decoder (for aliases)
// spends time or memory on it.
func Parse(name string, data []byte) (*Mapping, error) {
	return ParseContext(context.Background(), name, data)
}

// ParseContext is Parse that stops between its phases (bounds, YAML
// parse, decoding, validation) once ctx is done, returning an error that
// wraps context.Cause(ctx). Each phase is bounded by the limits above
// (well under a second for a file inside them); the YAML parser itself
// cannot be interrupted.
func ParseContext(ctx context.Context, name string, data []byte) (*Mapping, error) {
	m, err := ParsePartial(ctx, name, data)
	if err != nil {
		return nil, err
	}
	return m, nil
}

// LoadPartial reads the mapping file at path as LoadContext does, and
// parses it as ParsePartial.
func LoadPartial(ctx context.Context, path string) (*Mapping, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read mapping: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read mapping: %w", err)
	}
	return ParsePartial(ctx, path, data)
}

// ParsePartial is ParseContext for a caller that goes on to check the
// mapping against its source, so that one run reports every problem it
// can. It reports the same Errors; when the file could be decoded, it
// returns with them the mapping as far as the file defines it: every
// value of the wrong type left out (as if absent), every template that
// does not parse empty. Such a mapping is good for nothing but checking:
// its Problems are the errors, and pipeline.Prepare checks what they
// leave defined and reports them with its own. A file that is not YAML,
// is past a bound or holds no mapping gives a nil mapping.
func ParsePartial(ctx context.Context, name string, data []byte) (*Mapping, error) {
	m := &Mapping{File: name}
	stopped := func() error {
		if ctx.Err() != nil {
			return fmt.Errorf("parse mapping %s: %w", name, context.Cause(ctx))
		}
		return nil
	}
	if e := checkSize(name, int64(len(data))); e != nil {
		return nil, Errors{e}
	}
	data = bytes.TrimPrefix(data, []byte("\ufeff")) // a UTF-8 byte order mark
	if e := checkShape(name, string(data)); e != nil {
		return nil, Errors{e}
	}
	if err := stopped(); err != nil {
		return nil, err
	}
	f, err := parser.ParseBytes(data, 0)
	if err != nil {
		return nil, Errors{m.yamlError(err)}
	}
	if err := stopped(); err != nil {
		return nil, err
	}
	switch {
	case len(f.Docs) == 0 || f.Docs[0].Body == nil:
		return nil, Errors{{File: name, Msg: `empty mapping: expected "table:" and "entities:"`}}
	case len(f.Docs) > 1:
		e := &Error{File: name, Msg: "a second YAML document: expected the whole mapping in one document"}
		if tk := f.Docs[1].Start; tk != nil && tk.Position != nil {
			e.Line, e.Column = tk.Position.Line, tk.Position.Column
		}
		return nil, Errors{e}
	}
	m.pos = indexPositions(f)
	if e := m.checkAliases(f); e != nil {
		return nil, Errors{e}
	}
	unknown, fractions := m.unknownFields(), m.fractions()
	errs := slices.Concat(unknown, fractions)
	d := m.decode(f.Docs[0].Body, len(data), len(errs) == 0)
	errs = append(errs, d.errs...)
	if !d.ok {
		sortByPosition(errs)
		return nil, errs
	}
	if err := stopped(); err != nil {
		return nil, err
	}
	m.build(d.raw)
	for _, e := range m.validate() {
		if !m.follows(e.Path, unknown, slices.Concat(d.left, paths(fractions))) {
			errs = append(errs, e)
		}
	}
	if err := stopped(); err != nil {
		return nil, err
	}
	if len(errs) > 0 {
		sortByPosition(errs)
		m.problems = errs
		return m, errs
	}
	return m, nil
}

// build sets m's fields from the decoded file, entities and access
// patterns in file order, and applies the defaults.
func (m *Mapping) build(raw file) {
	m.Version, m.Name, m.Table, m.TypeAttribute, m.Library = raw.Version, raw.Name, raw.Table, raw.TypeAttribute, raw.Library
	for _, name := range m.pos.entityOrder {
		// Copy: a YAML alias (B: *a) decodes to the same *Entity as A.
		e := &Entity{}
		if d := raw.Entities[name]; d != nil {
			*e = *d
		}
		e.Name = name
		m.Entities = append(m.Entities, e)
	}
	for _, name := range m.pos.patternOrder {
		ap := &AccessPattern{}
		if d := raw.AccessPatterns[name]; d != nil {
			*ap = *d
		}
		ap.Name = name
		m.AccessPatterns = append(m.AccessPatterns, ap)
	}
	m.applyDefaults()
}

// sortByPosition puts errs in file order: by line, then column.
func sortByPosition(errs Errors) {
	sort.SliceStable(errs, func(i, j int) bool {
		if errs[i].Line != errs[j].Line {
			return errs[i].Line < errs[j].Line
		}
		return errs[i].Column < errs[j].Column
	})
}

func (m *Mapping) applyDefaults() {
	if m.Version == 0 {
		m.Version = 1
	}
	t := &m.Table
	if t.PartitionKey == "" {
		t.PartitionKey = DefaultPartitionKey
	}
	if t.SortKey == "" && !m.pos.quoted[Path(KeyTable, KeySortKey)] {
		t.SortKey = DefaultSortKey // sort_key: "" declares none; no value is the default
	}
	if t.BillingMode == "" {
		t.BillingMode = PayPerRequest
	}
	for i := range t.GSIs {
		if t.GSIs[i].Projection == "" {
			t.GSIs[i].Projection = ProjectAll
		}
	}
	if m.TypeAttribute == "" {
		m.TypeAttribute = m.Library.TypeAttribute()
	}
	for _, e := range m.Entities {
		if e.Type == "" {
			e.Type = e.Name
		}
	}
}

// tableNameRE is DynamoDB's rule for table and index names: 3 to 255
// characters of a-z, A-Z, 0-9, '_', '-', '.'.
// https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/HowItWorks.NamingRulesDataTypes.html
var tableNameRE = regexp.MustCompile(TableNamePattern)

// TableNamePattern is tableNameRE's expression, for the JSON Schema.
const TableNamePattern = `^[a-zA-Z0-9_.-]{3,255}$`

// entityNameRE is the form of entity names: they appear in dotted paths
// and are the default type value.
var entityNameRE = regexp.MustCompile(EntityNamePattern)

// EntityNamePattern is entityNameRE's expression, for the JSON Schema.
const EntityNamePattern = `^[A-Za-z][A-Za-z0-9_-]*$`

// mappingNameRE is the form of a mapping's name: an identifier that is
// also a valid DynamoDB tag value (at most 256 characters of letters,
// digits, spaces and + - = . _ : / @).
// https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Tagging.html
var mappingNameRE = regexp.MustCompile(MappingNamePattern)

// MappingNamePattern is mappingNameRE's expression, for the JSON Schema.
const MappingNamePattern = `^[A-Za-z][A-Za-z0-9_.-]{0,127}$`

// ValidMappingName reports whether name is a valid mapping name (1 to 128
// characters: a letter, then letters, digits, '_', '-' or '.').
func ValidMappingName(name string) bool { return mappingNameRE.MatchString(name) }

// ValidTableName reports whether name follows DynamoDB's naming rules for
// tables and indexes (3-255 characters of a-z, A-Z, 0-9, '_', '-', '.').
func ValidTableName(name string) bool { return tableNameRE.MatchString(name) }

func (m *Mapping) validate() Errors {
	var errs Errors
	add := func(path, format string, args ...any) { errs = append(errs, m.Errorf(path, format, args...)) }

	if m.Version != 1 {
		add(KeyVersion, "unsupported version %d: expected 1", m.Version)
	}
	if m.Name != "" && !mappingNameRE.MatchString(m.Name) {
		add(KeyName, "invalid mapping name %q: expected 1-128 characters, a letter then letters, digits, '_', '-' or '.'", m.Name)
	}
	t := &m.Table
	tp := KeyTable
	if t.Name == "" {
		add(Path(tp, KeyName), "missing: expected the DynamoDB table name")
	} else if !tableNameRE.MatchString(t.Name) {
		add(Path(tp, KeyName), "invalid table name %q: expected 3-255 characters of a-z, A-Z, 0-9, '_', '-', '.'", t.Name)
	}
	if t.SortKey != "" && t.PartitionKey == t.SortKey {
		add(Path(tp, KeySortKey), "the sort key attribute %q is also the partition key: expected two different attribute names", t.SortKey)
	}
	switch t.BillingMode {
	case PayPerRequest:
		if t.ReadCapacity != 0 || t.WriteCapacity != 0 {
			add(Path(tp, KeyBillingMode), "read_capacity and write_capacity need billing_mode %s", Provisioned)
		}
	case Provisioned:
		if t.ReadCapacity <= 0 || t.WriteCapacity <= 0 {
			add(Path(tp, KeyBillingMode), "%s needs read_capacity and write_capacity above 0", Provisioned)
		}
	default:
		add(Path(tp, KeyBillingMode), "unknown billing mode %q: expected %s or %s", t.BillingMode, PayPerRequest, Provisioned)
	}
	seenGSI := map[string]bool{}
	for i, g := range t.GSIs {
		gp := fmt.Sprintf("%s.%s[%d]", tp, KeyGSIs, i)
		switch {
		case g.Name == "":
			add(Path(gp, KeyName), "missing: expected the index name")
		case !tableNameRE.MatchString(g.Name):
			add(Path(gp, KeyName), "invalid index name %q: expected 3-255 characters of a-z, A-Z, 0-9, '_', '-', '.'", g.Name)
		case seenGSI[g.Name]:
			add(Path(gp, KeyName), "duplicate index name %q", g.Name)
		}
		seenGSI[g.Name] = true
		if g.PartitionKey == "" && !g.MultiAttribute() {
			add(Path(gp, KeyPartitionKey), "missing: expected the index's partition key attribute name")
		}
		if g.SortKey != "" && g.SortKey == g.PartitionKey {
			add(Path(gp, KeySortKey), "the sort key attribute %q is also the partition key", g.SortKey)
		}
		switch g.Projection {
		case ProjectAll, ProjectKeysOnly:
			if len(g.NonKeyAttributes) > 0 {
				add(Path(gp, KeyNonKeyAttrs), "non_key_attributes need projection %s", ProjectInclude)
			}
		case ProjectInclude:
			if len(g.NonKeyAttributes) == 0 {
				add(Path(gp, KeyNonKeyAttrs), "projection %s needs at least one attribute", ProjectInclude)
			}
		default:
			add(Path(gp, KeyProjection), "unknown projection %q: expected %s, %s or %s", g.Projection, ProjectAll, ProjectKeysOnly, ProjectInclude)
		}
		hasCapacity := g.ReadCapacity != 0 || g.WriteCapacity != 0
		if t.BillingMode == Provisioned && (g.ReadCapacity <= 0 || g.WriteCapacity <= 0) {
			add(gp, "billing_mode %s needs read_capacity and write_capacity above 0 on every GSI", Provisioned)
		} else if t.BillingMode != Provisioned && hasCapacity {
			add(gp, "read_capacity and write_capacity need billing_mode %s", Provisioned)
		}
	}
	errs = append(errs, m.validateSettings()...)
	errs = append(errs, m.validateKeyTypes()...)

	if slices.Contains(m.KeyAttributes(), m.TypeAttribute) {
		add(KeyTypeAttribute, "%q is a key attribute of the table or a GSI: expected another attribute name for the entity type", m.TypeAttribute)
	}
	if len(m.Entities) == 0 {
		add(KeyEntities, "missing: expected at least one entity")
	}
	for _, e := range m.Entities {
		errs = append(errs, m.validateEntity(e)...)
	}
	for _, ap := range m.AccessPatterns {
		if g := ap.MultiAttributeIndex(t); g != nil {
			errs = append(errs, m.validateMultiPattern(ap, g)...)
			continue
		}
		errs = append(errs, m.validatePattern(ap)...)
	}
	errs = append(errs, m.validateTypedKeys()...)
	errs = append(errs, m.validateLibrary()...)
	return errs
}

// entityCheck collects the problems of one entity of m as validateEntity
// finds them.
type entityCheck struct {
	m    *Mapping
	e    *Entity
	ep   string // the entity's dotted path, entities.<name>
	errs Errors
}

// add records a problem at path.
func (c *entityCheck) add(path, format string, args ...any) {
	c.errs = append(c.errs, c.m.Errorf(path, format, args...))
}

// validateEntity checks entity e and parses its key templates (into
// PKTemplate, SKTemplate, IndexTemplate and the mirror's). Column names
// are checked later, against the database (transform.Compile).
func (m *Mapping) validateEntity(e *Entity) Errors {
	c := &entityCheck{m: m, e: e, ep: Path(KeyEntities, e.Name)}
	if !entityNameRE.MatchString(e.Name) {
		c.add(c.ep, "invalid entity name %q: expected a letter, then letters, digits, '_' or '-'", e.Name)
		return c.errs
	}
	c.checkSource()
	e.PKTemplate = c.parse(Path(c.ep, KeyPK), e.PK, "partition key")
	e.SKTemplate = c.parseSort(Path(c.ep, KeySK), e.SK)
	c.checkIndexes()
	c.checkMirror()
	c.checkStrategies()
	c.checkAttributes()
	return c.errs
}

// checkSource checks that the entity reads exactly one of a table and a
// query, and a schema only with a table.
func (c *entityCheck) checkSource() {
	s := c.e.Source
	switch {
	case s.Table == "" && s.Query == "":
		c.add(Path(c.ep, KeySource), "missing: expected source.table or source.query")
	case s.Table != "" && s.Query != "":
		c.add(Path(c.ep, KeySource), "both table and query given: expected exactly one")
	case s.Query != "" && s.Schema != "":
		c.add(Path(c.ep, KeySource, KeySchema), "schema applies to source.table only; qualify names inside the query instead")
	}
}

// parse parses text, the template at path (what names it in messages), or
// records why it cannot, located at the fault in the template, and returns
// the zero Template.
func (c *entityCheck) parse(path, text, what string) Template {
	if text == "" {
		c.add(path, "missing: expected the %s template, e.g. %q", what, "ORDER#${order_id}")
		return Template{}
	}
	tpl, err := ParseTemplate(text)
	if err != nil {
		var te *TemplateError
		offset := -1
		if errors.As(err, &te) {
			offset = te.Offset
		}
		c.errs = append(c.errs, c.m.errorIn(path, text, offset, err, "template %q: %v", text, err))
		return Template{}
	}
	for _, be := range Braces(text) {
		c.errs = append(c.errs, c.m.errorIn(path, text, be.Offset, be, "template %q: %v", text, be))
	}
	return tpl
}

// parseSort parses text, the sort key template at path, as parse does; on
// a table without a sort key, text must be empty (and Template is zero).
func (c *entityCheck) parseSort(path, text string) Template {
	if c.m.Table.SortKey != "" {
		return c.parse(path, text, "sort key")
	}
	if text != "" {
		c.add(path, "the table has no sort key (table.sort_key is empty): remove %s, or declare the table's sort_key", KeySK)
	}
	return Template{}
}

// errorIn returns the *Error at path, whose value is text, about the
// character at byte offset of text (located at the value when offset is
// negative), with cause err.
func (m *Mapping) errorIn(path, text string, offset int, err error, format string, args ...any) *Error {
	e := m.Errorf(path, format, args...)
	e.Err = err
	if offset >= 0 && offset <= len(text) && e.Line > 0 {
		e.Column += m.pos.valueOffset(path) + utf8.RuneCountInString(text[:offset])
	}
	return e
}

// checkIndexes checks the entity's indexes, in name order, against the
// table's GSIs and parses their templates into IndexTemplate.
func (c *entityCheck) checkIndexes() {
	e, t := c.e, &c.m.Table
	names := make([]string, 0, len(e.Indexes))
	for n := range e.Indexes {
		names = append(names, n)
	}
	sort.Strings(names)
	e.IndexTemplate = map[string][2]Template{}
	for _, n := range names {
		ip := Path(c.ep, KeyIndexes, n)
		g := t.GSI(n)
		if g == nil {
			if len(t.GSIs) == 0 {
				c.add(ip, "unknown index %q: the table declares no gsis; declare it under table.gsis", n)
			} else {
				c.add(ip, "unknown index %q: expected one of the table's gsis (%s)", n, strings.Join(c.m.gsiNames(), ", "))
			}
			continue
		}
		if g.MultiAttribute() {
			c.add(ip, "index %s has multi-attribute keys (partition_keys, sort_keys), which items carry as their own attributes: remove this entry", n)
			continue
		}
		e.IndexTemplate[n] = c.indexTemplates(ip, n, g, e.Indexes[n])
	}
}

// indexTemplates parses the partition and sort key templates of index n
// (at path ip), whose GSI is g. A template is an error where g has no such
// key, or where the key is one of the table's (written from pk and sk).
func (c *entityCheck) indexTemplates(ip, n string, g *GSI, ik IndexKeys) [2]Template {
	t := &c.m.Table
	var pair [2]Template
	for i, kt := range []struct{ attr, text, key, what string }{
		{g.PartitionKey, ik.PK, KeyPK, "partition key"},
		{g.SortKey, ik.SK, KeySK, "sort key"},
	} {
		kp := Path(ip, kt.key)
		switch {
		case kt.attr == "":
			if kt.text != "" {
				c.add(kp, "index %s has no sort key", n)
			}
		case kt.attr == t.PartitionKey || kt.attr == t.SortKey:
			if kt.text != "" {
				c.add(kp, "index %s's %s is the table's key attribute %q, written from the entity's own pk/sk: remove this template", n, kt.what, kt.attr)
			}
		default:
			pair[i] = c.parse(kp, kt.text, "index "+kt.what)
		}
	}
	return pair
}

// checkAttributes checks the entity's attributes rules: renames (in column
// order) to a non-empty name that is not a key or type attribute, no empty
// column names in select and exclude, and the sets.
func (c *entityCheck) checkAttributes() {
	a := c.e.Attributes
	reserved := c.m.KeyAttributes()
	reserved = append(reserved, c.m.TypeAttribute)
	cols := make([]string, 0, len(a.Rename))
	for col := range a.Rename {
		cols = append(cols, col)
	}
	sort.Strings(cols)
	for _, col := range cols {
		to := a.Rename[col]
		rp := Path(c.ep, KeyAttributes, KeyRename, col)
		switch {
		case to == "":
			c.add(rp, "empty attribute name: expected the new name of column %q", col)
		case slices.Contains(reserved, to):
			c.add(rp, "attribute name %q is a key or type attribute of the table: choose another name", to)
		}
	}
	for i, col := range a.Select {
		if col == "" {
			c.add(fmt.Sprintf("%s.%s.%s[%d]", c.ep, KeyAttributes, KeySelect, i), "empty column name")
		}
	}
	for i, col := range a.Exclude {
		if col == "" {
			c.add(fmt.Sprintf("%s.%s.%s[%d]", c.ep, KeyAttributes, KeyExclude, i), "empty column name")
		}
	}
	c.errs = append(c.errs, c.m.validateSets(Path(c.ep, KeyAttributes), a)...)
}

// KeyAttributes returns the names of the table's key attributes and of every
// GSI key attribute, without repeats: these are rendered from templates
// (strings unless declared N or B: Table.KeyType) and never come from
// columns directly. The attributes of
// multi-attribute GSI keys (GSI.PartitionKeys, GSI.SortKeys) are not among
// them: items carry those as ordinary attributes (see
// Table.KeyAttributeTypes for all key attributes with their types).
func (m *Mapping) KeyAttributes() []string {
	out := []string{m.Table.PartitionKey}
	if m.Table.SortKey != "" {
		out = append(out, m.Table.SortKey)
	}
	for _, g := range m.Table.GSIs {
		for _, a := range []string{g.PartitionKey, g.SortKey} {
			if a != "" && !slices.Contains(out, a) {
				out = append(out, a)
			}
		}
	}
	return out
}

func (m *Mapping) gsiNames() []string {
	var out []string
	for _, g := range m.Table.GSIs {
		if g.Name != "" && !slices.Contains(out, g.Name) {
			out = append(out, g.Name)
		}
	}
	return out
}

// yamlError converts a go-yaml error into a located *Error.
func (m *Mapping) yamlError(err error) *Error {
	e := &Error{File: m.File, Msg: err.Error()}
	var ye yaml.Error
	if !errors.As(err, &ye) {
		return e
	}
	e.Msg = ye.GetMessage()
	tk := ye.GetToken()
	if tk != nil && tk.Position != nil {
		e.Line, e.Column = tk.Position.Line, tk.Position.Column
		if m.pos != nil {
			e.Path = m.pos.byPos[posKey{e.Line, e.Column}]
		}
	}
	var te *yaml.TypeError
	var ue *yaml.UnknownFieldError
	var nte *yaml.UnexpectedNodeTypeError
	switch {
	case errors.As(err, &te):
		e.Msg = fmt.Sprintf("expected %s, got %s", kindName(te.DstType), kindName(te.SrcType))
		e.Msg += quotedScalar(tk)
	case errors.As(err, &nte):
		e.Msg = fmt.Sprintf("expected %s, got %s", nodeName(nte.Expected), nodeName(nte.Actual)) + quotedScalar(tk)
	case errors.As(err, &ue):
		_, name, _ := cutLast(e.Path)
		switch allowed := allowedFields(e.Path); {
		case slices.Contains(allowed, name):
			// Known here: an alias uses this value where it is not.
			e.Msg = fmt.Sprintf("field %q is unknown where an alias of this value is used", name)
		case len(allowed) > 0:
			e.Msg += "; expected one of: " + strings.Join(allowed, ", ")
		}
	case tk == nil:
	default:
		e.Msg = "invalid YAML: " + e.Msg
	}
	return e
}

// quotedScalar returns ` ("value")` for a scalar token, "" for the start
// of a list or mapping.
func quotedScalar(tk *token.Token) string {
	if tk == nil {
		return ""
	}
	switch tk.Type {
	case token.SequenceStartType, token.SequenceEntryType, token.MappingStartType, token.MappingValueType:
		return ""
	}
	return " (" + strconv.Quote(tk.Value) + ")"
}

func nodeName(t ast.NodeType) string {
	switch t {
	case ast.MappingType, ast.MappingValueType:
		return "a mapping"
	case ast.SequenceType:
		return "a list"
	case ast.StringType:
		return "a string"
	case ast.IntegerType, ast.FloatType:
		return "a number"
	case ast.BoolType:
		return "true or false"
	case ast.NullType:
		return "nothing"
	}
	return t.String()
}

func kindName(t reflect.Type) string {
	if t == nil {
		return "a value"
	}
	switch t.Kind() {
	case reflect.Struct, reflect.Map:
		return "a mapping"
	case reflect.Slice, reflect.Array:
		return "a list"
	case reflect.String:
		return "a string"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64, reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a whole number"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Bool:
		return "true or false"
	case reflect.Pointer:
		return kindName(t.Elem())
	}
	return t.String()
}

// allowedFields lists the field names valid next to the unknown field at
// path, or nil where any key is allowed (a map such as entities or rename).
func allowedFields(path string) []string {
	parent, _, _ := cutLast(path)
	t := typeAt(parent)
	if t == nil || t.Kind() != reflect.Struct {
		return nil
	}
	var out []string
	for i := 0; i < t.NumField(); i++ {
		tag, _, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ",")
		if tag != "" && tag != "-" {
			out = append(out, tag)
		}
	}
	return out
}

// typeAt follows a dotted path ("entities.Order.embed.lines.source") from
// the file's type through struct fields (by YAML name), map values and
// list elements ("gsis[0]"), and returns the Go type there, or nil.
func typeAt(path string) reflect.Type {
	t := reflect.TypeOf(file{})
	if path == "" {
		return t
	}
	for _, seg := range strings.Split(path, ".") {
		name, _, indexed := strings.Cut(seg, "[")
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		switch t.Kind() {
		case reflect.Struct:
			f, ok := fieldByTag(t, name)
			if !ok {
				return nil
			}
			t = f
		case reflect.Map:
			t = t.Elem()
		default:
			return nil
		}
		if indexed {
			for t.Kind() == reflect.Pointer {
				t = t.Elem()
			}
			if t.Kind() != reflect.Slice {
				return nil
			}
			t = t.Elem()
		}
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
}

func fieldByTag(t reflect.Type, name string) (reflect.Type, bool) {
	for i := 0; i < t.NumField(); i++ {
		if tag, _, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ","); tag == name {
			return t.Field(i).Type, true
		}
	}
	return nil, false
}

func cutLast(path string) (parent, last string, ok bool) {
	i := strings.LastIndexByte(path, '.')
	if i < 0 {
		return "", path, path != ""
	}
	return path[:i], path[i+1:], true
}

// unknownFields reports every key the mapping language does not define, in
// file order, where it is written. (The decoder stops at one, chosen in map
// order.)
func (m *Mapping) unknownFields() Errors {
	var errs Errors
	for _, k := range m.pos.keys {
		allowed := allowedFields(k.path)
		_, name, _ := cutLast(k.path)
		if allowed != nil && !slices.Contains(allowed, name) {
			errs = append(errs, &Error{File: m.File, Line: k.line, Column: k.col, Path: k.path,
				Msg: fmt.Sprintf("unknown field %q; expected one of: %s", name, strings.Join(allowed, ", "))})
		}
	}
	return errs
}

// fractions reports every number written with a fraction for a whole
// number. The YAML decoder truncates a fraction into an integer field (1.5
// to 1): refused here, where the field's Go type is known.
func (m *Mapping) fractions() Errors {
	var errs Errors
	for _, f := range m.pos.fractions {
		if t := typeAt(f.path); t != nil && (t.Kind() >= reflect.Int && t.Kind() <= reflect.Uint64) {
			errs = append(errs, &Error{File: m.File, Line: f.line, Column: f.col, Path: f.path,
				Msg: fmt.Sprintf("expected a whole number, got %s", f.text)})
		}
	}
	return errs
}

type posKey struct{ line, col int }

type pos struct{ line, col int }

// positions maps dotted paths to places in the file and back.
type positions struct {
	byPath       map[string]pos
	byPos        map[posKey]string
	entityOrder  []string
	patternOrder []string
	// keys are every mapping key in file order.
	keys []keyAt
	// quoted marks the paths whose scalar value is quoted.
	quoted map[string]bool
	// fractions are the scalar values written with a fraction (1.5).
	fractions []fraction
}

// fraction is a number with a fractional part, at path.
type fraction struct {
	keyAt
	text string
}

type keyAt struct {
	path      string
	line, col int
}

// has reports whether the value at path is written in the file.
func (p *positions) has(path string) bool {
	_, ok := p.byPath[path]
	return ok
}

func (p *positions) lookup(path string) (pos, bool) {
	for {
		if q, ok := p.byPath[path]; ok {
			return q, true
		}
		parent, _, ok := cutLast(path)
		if !ok || parent == path {
			return pos{}, false
		}
		path = parent
	}
}

func indexPositions(f *ast.File) *positions {
	p := &positions{byPath: map[string]pos{}, byPos: map[posKey]string{}, quoted: map[string]bool{}}
	for _, doc := range f.Docs {
		p.walk(doc.Body, "")
	}
	return p
}

func (p *positions) add(path string, tk *token.Token, reverse bool) {
	if tk == nil || tk.Position == nil {
		return
	}
	q := pos{tk.Position.Line, tk.Position.Column}
	if _, ok := p.byPath[path]; !ok {
		p.byPath[path] = q
	}
	if reverse {
		p.byPos[posKey(q)] = path
	}
}

func (p *positions) walk(n ast.Node, path string) {
	switch n := n.(type) {
	case *ast.MappingNode:
		for _, mv := range n.Values {
			p.walkPair(mv, path)
		}
	case *ast.MappingValueNode:
		p.walkPair(n, path)
	case *ast.SequenceNode:
		for i, v := range n.Values {
			ip := fmt.Sprintf("%s[%d]", path, i)
			p.add(ip, startToken(v), true)
			p.walk(v, ip)
		}
	case *ast.AnchorNode:
		p.walk(n.Value, path)
	case *ast.TagNode:
		p.walk(n.Value, path)
	}
}

// startToken is the first token of a node: for a block mapping, its first
// key (the node's own token is the ':' after it).
func startToken(n ast.Node) *token.Token {
	switch n := n.(type) {
	case *ast.MappingNode:
		if len(n.Values) > 0 && !n.IsFlowStyle {
			return n.Values[0].Key.GetToken()
		}
	case *ast.MappingValueNode:
		return n.Key.GetToken()
	}
	return n.GetToken()
}

// valueOffset is 1 when the scalar at path is quoted: the text starts one
// column after the token.
func (p *positions) valueOffset(path string) int {
	if p.quoted[path] {
		return 1
	}
	return 0
}

// keyName is the name of mv's key, as paths spell it.
func keyName(mv *ast.MappingValueNode) string {
	switch v := mv.Key.(type) {
	case *ast.NullNode:
		return "" // "~:" is a null key, not the name "null"
	case ast.ScalarNode:
		return fmt.Sprint(v.GetValue())
	}
	return mv.Key.String()
}

// childPath is the path of key under parent.
func childPath(parent, key string) string {
	if parent == "" {
		return key
	}
	return parent + "." + key
}

func (p *positions) walkPair(mv *ast.MappingValueNode, parent string) {
	key := keyName(mv)
	path := childPath(parent, key)
	switch parent {
	case KeyEntities:
		p.entityOrder = append(p.entityOrder, key)
	case KeyAccessPatterns:
		p.patternOrder = append(p.patternOrder, key)
	}
	if tk := mv.Key.GetToken(); tk != nil && tk.Position != nil {
		p.keys = append(p.keys, keyAt{path, tk.Position.Line, tk.Position.Column})
	}
	if f, ok := mv.Value.(*ast.FloatNode); ok && f.Value != math.Trunc(f.Value) && f.Token != nil && f.Token.Position != nil {
		p.fractions = append(p.fractions, fraction{keyAt{path, f.Token.Position.Line, f.Token.Position.Column}, f.Token.Value})
	}
	if tk := mv.Value.GetToken(); tk != nil && (tk.Type == token.DoubleQuoteType || tk.Type == token.SingleQuoteType) {
		p.quoted[path] = true
	}
	// Errors about a scalar point at the value; about a mapping or list, at its key.
	// Children, walked after, take over positions they share with their parent.
	switch v := mv.Value.(type) {
	case *ast.MappingNode, *ast.MappingValueNode, *ast.SequenceNode:
		p.add(path, mv.Key.GetToken(), true)
		p.add(path, v.GetToken(), true)
	case *ast.NullNode:
		p.add(path, mv.Key.GetToken(), true)
	default:
		p.add(path, mv.Value.GetToken(), true)
		p.add(path, mv.Key.GetToken(), true)
	}
	p.walk(mv.Value, path)
}
