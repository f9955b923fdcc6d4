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

// LoadContext is Load as ParseContext. A file over MaxFileBytes is refused as
// Errors unread; a read error wraps the *fs.PathError.
func LoadContext(ctx context.Context, path string) (*Mapping, error) {
	return load(ctx, path, ParseContext)
}

// load reads at most MaxFileBytes+1 bytes of the file at path and parses them with parse.
func load(ctx context.Context, path string, parse func(context.Context, string, []byte) (*Mapping, error)) (*Mapping, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read mapping: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read mapping: %w", err)
	}
	return parse(ctx, path, data)
}

// Parse parses a mapping from data (named name in errors): strict decoding,
// defaults, key templates, validation. A failure is Errors. It reads no
// database (transform.Compile checks the live schema). Input past MaxFileBytes,
// MaxMappingKeys, MaxDepth or MaxAliasNodes is refused before the YAML parser
// or decoder spends time on it.
func Parse(name string, data []byte) (*Mapping, error) {
	return ParseContext(context.Background(), name, data)
}

// ParseContext is Parse that stops between phases once ctx is done, with an
// error wrapping context.Cause(ctx); the YAML parser itself cannot be
// interrupted.
func ParseContext(ctx context.Context, name string, data []byte) (*Mapping, error) {
	m, err := ParsePartial(ctx, name, data)
	if err != nil {
		return nil, err
	}
	return m, nil
}

// LoadPartial reads the file at path as LoadContext and parses it as
// ParsePartial.
func LoadPartial(ctx context.Context, path string) (*Mapping, error) {
	return load(ctx, path, ParsePartial)
}

// ParsePartial is ParseContext that, with the same Errors, returns the mapping
// as far as the file defines it (wrong-typed values left out, bad templates
// empty), so a caller checking it against the source reports every problem in
// one run; its Problems are the errors. nil when the file is not YAML, is past
// a bound or holds no mapping.
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
		errs.Sort()
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
		errs.Sort()
		m.problems = errs
		return m, errs
	}
	return m, nil
}

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

// tableNameRE is DynamoDB's rule for table and index names.
// https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/HowItWorks.NamingRulesDataTypes.html
var tableNameRE = regexp.MustCompile(TableNamePattern)

// TableNamePattern is tableNameRE's expression, for the JSON Schema.
const TableNamePattern = `^[a-zA-Z0-9_.-]{3,255}$`

// entityNameRE: entity names appear in dotted paths and are the default type
// value.
var entityNameRE = regexp.MustCompile(EntityNamePattern)

// EntityNamePattern is entityNameRE's expression, for the JSON Schema.
const EntityNamePattern = `^[A-Za-z][A-Za-z0-9_-]*$`

// mappingNameRE: a mapping name is also a valid DynamoDB tag value.
// https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Tagging.html
var mappingNameRE = regexp.MustCompile(MappingNamePattern)

// MappingNamePattern is mappingNameRE's expression, for the JSON Schema.
const MappingNamePattern = `^[A-Za-z][A-Za-z0-9_.-]{0,127}$`

// ValidMappingName reports whether name is a valid mapping name
// (MappingNamePattern).
func ValidMappingName(name string) bool { return mappingNameRE.MatchString(name) }

// ValidTableName reports whether name follows DynamoDB's table and index naming
// rules.
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

type entityCheck struct {
	m    *Mapping
	e    *Entity
	ep   string // the entity's dotted path, entities.<name>
	errs Errors
}

func (c *entityCheck) add(path, format string, args ...any) {
	c.errs = append(c.errs, c.m.Errorf(path, format, args...))
}

// validateEntity checks e and parses its key templates; transform.Compile
// checks columns later.
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

// parse parses the template at path, or records why not (at the fault) and
// returns the zero Template.
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

// parseSort is parse for a sort key; without a table sort key, text must be
// empty.
func (c *entityCheck) parseSort(path, text string) Template {
	if c.m.Table.SortKey != "" {
		return c.parse(path, text, "sort key")
	}
	if text != "" {
		c.add(path, "the table has no sort key (table.sort_key is empty): remove %s, or declare the table's sort_key", KeySK)
	}
	return Template{}
}

// errorIn returns an *Error at path about byte offset of its value (the value
// when offset < 0).
func (m *Mapping) errorIn(path, text string, offset int, err error, format string, args ...any) *Error {
	e := m.Errorf(path, format, args...)
	e.Err = err
	if offset >= 0 && offset <= len(text) && e.Line > 0 {
		e.Column += m.pos.valueOffset(path) + utf8.RuneCountInString(text[:offset])
	}
	return e
}

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

// indexTemplates parses index n's key templates; one is an error where g lacks
// the key or it is the table's.
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

// checkAttributes checks renames (non-empty, not a key or type attribute),
// select, exclude and sets.
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

// KeyAttributes returns the table's and template GSIs' key attribute names,
// once each; never from columns. Multi-attribute GSI keys are ordinary
// attributes (see Table.KeyAttributeTypes).
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

// allowedFields lists the valid field names beside the unknown one at path; nil
// for any-key maps.
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

// typeAt follows a dotted path ("entities.Order.embed.lines.source") to its Go
// type, or nil.
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

// unknownFields reports every undefined key in file order (the decoder stops at
// one, in map order).
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

// fractions reports fractions written for integer fields, which the decoder
// would truncate.
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
	keys         []keyAt
	quoted       map[string]bool
	fractions    []fraction
}

type fraction struct {
	keyAt
	text string
}

type keyAt struct {
	path      string
	line, col int
}

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

// startToken is a node's first token: a block mapping's first key, not its ':'.
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

// valueOffset is 1 when the scalar at path is quoted.
func (p *positions) valueOffset(path string) int {
	if p.quoted[path] {
		return 1
	}
	return 0
}

func keyName(mv *ast.MappingValueNode) string {
	switch v := mv.Key.(type) {
	case *ast.NullNode:
		return "" // "~:" is a null key, not the name "null"
	case ast.ScalarNode:
		return fmt.Sprint(v.GetValue())
	}
	return mv.Key.String()
}

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
	// Errors point at a scalar's value, at a mapping's or list's key; children
	// walked later take over shared positions.
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
