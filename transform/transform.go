// Package transform turns source rows into DynamoDB items by a mapping's rules.
// It is pure (rows in, items out, no I/O), so it is tested without a database.
// Compile checks an entity against its source's real columns (extract.Describe)
// and returns a Plan; Plan.Items converts one row. Types convert as
// docs/mapping.md, "Types: PostgreSQL → DynamoDB", documents.
package transform

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/pg2dynamo/pg2dynamo/extract"
	"github.com/pg2dynamo/pg2dynamo/internal/suggest"
	"github.com/pg2dynamo/pg2dynamo/mapping"
)

// DynamoDB key size limits in bytes of UTF-8.
// https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/ServiceQuotas.html#limits-partition-sort-keys
const (
	MaxPartitionKeyBytes = 2048
	MaxSortKeyBytes      = 1024
)

// Item is one DynamoDB item produced from one source row.
type Item struct {
	// Entity is the index of the entity in mapping.Mapping.Entities.
	Entity int
	// Attrs is the item: key and type attributes and the converted columns
	// (NULLs absent).
	Attrs map[string]types.AttributeValue
	// Row is the source row (Plan.Columns order), kept to name it if writing
	// the item fails.
	Row []any
	// Delete asks the sink to delete the item of Attrs' key attributes (all
	// Attrs holds then): a gone source row's item, or an old key's (package
	// follow).
	Delete bool
}

// RowError is why one source row gave no item: data, not a run failure; the row
// goes to the rejects file.
type RowError struct {
	Entity string
	// SourceKey holds the row's primary key and key template column values as
	// key text (nil for NULL), to find the row in PostgreSQL.
	SourceKey map[string]any
	// Column is the column at fault, if any.
	Column string
	// Reason says what is wrong.
	Reason string
}

func (e *RowError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s row %s", e.Entity, FormatSourceKey(e.SourceKey))
	if e.Column != "" {
		fmt.Fprintf(&b, ": column %q", e.Column)
	}
	b.WriteString(": ")
	b.WriteString(e.Reason)
	return b.String()
}

// FormatSourceKey renders a source key as col=value pairs in name order.
func FormatSourceKey(k map[string]any) string {
	parts := make([]string, 0, len(k))
	for _, n := range slices.Sorted(maps.Keys(k)) {
		if k[n] == nil {
			parts = append(parts, n+"=NULL")
		} else {
			parts = append(parts, fmt.Sprintf("%s=%v", n, k[n]))
		}
	}
	return "(" + strings.Join(parts, ", ") + ")"
}

// Plan converts rows of one entity and never changes once compiled: Items is
// safe for concurrent use, as is Builder.Items with a Builder per goroutine.
// Query reads rows in primary-key order when the source has one (Ordered).
type Plan struct {
	entity   *mapping.Entity
	index    int
	cols     []extract.Column
	attrs    []attrPlan
	keys     []keyPlan
	typeAttr string
	typeVal  types.AttributeValue
	// keyCols are the indexes in cols of the columns the key templates use.
	keyCols []int
	srcCols []extract.Column
	joins   []joinPlan
	ids     []idPlan
	query   extract.Query
	unique  []extract.UniqueKey
	// kinds and texts are each column's kind and text function (nil for none),
	// by cols index.
	kinds []kind
	texts []func(any) (string, error)
	// nativeKeys are the multi-attribute GSI key attributes the items carry,
	// checked per item.
	nativeKeys []nativeKey
	// mapSize is the most attributes an item can have.
	mapSize int
	// typeSize is the type attribute's size; sizeByParts: an item's size is its
	// attributes' sum as added (no joins, no two keys of one name).
	typeSize    int
	sizeByParts bool
	// gsiAttrs are the GSI key attributes (left out of a mirror).
	gsiAttrs []string
	slots    mapping.KeySlots
	// formats say how each column renders in the entity's keys and their
	// patterns.
	formats keyFormats
	// lib is what the mapping's library preset adds to every item.
	lib libraryPlan
}

type attrPlan struct {
	col     int
	name    string
	convert func(any) (types.AttributeValue, error)
	// nested: json or array values, checked against MaxNestingDepth.
	nested bool
	// kind is the column's (its elements' for an array); textual: Builder
	// renders it as text in its first pass.
	kind           kind
	array, textual bool
}

type keyPlan struct {
	attr string
	// typ is mapping.TypeString, TypeNumber (canonical number text) or
	// TypeBinary (the bytes).
	typ      string
	path     string // of the template in the mapping
	template mapping.Template
	maxBytes int
	parts    []keyPart
	// sparse: a NULL leaves the attribute (and its GSI sibling) out.
	sparse bool
	gsi    string
	// lower: the rendered key is lower-cased (electrodb).
	lower bool
	// same is an earlier non-mirror key plan with the same parts (GSIs often
	// repeat the sort key's template), whose text this key reuses; -1 for none.
	same int
}

// sameParts reports whether two key templates render the same text.
func sameParts(a, b []keyPart) bool {
	return slices.EqualFunc(a, b, func(x, y keyPart) bool {
		return x.literal == y.literal && x.col == y.col && x.id == y.id && x.enc == y.enc
	})
}

// keyPart is a literal or a placeholder of a key template.
type keyPart struct {
	literal string
	// col is the row value index of the placeholder's value (a source or
	// duplicated column); -1 for a literal or ID.
	col int
	// id is the Plan.ids index of the placeholder's stable ID; -1 for none.
	id   int
	enc  keyEnc
	text func(any) (string, error)
}

// Compile checks entity index of m against srcs (from extract.Describe) and
// returns its Plan: CompileAll for one entity, without cross-entity checks.
func Compile(m *mapping.Mapping, index int, srcs Sources) (*Plan, error) {
	all := make([]*Sources, len(m.Entities))
	all[index] = &srcs
	plans, err := CompileAll(m, all)
	if err != nil {
		return nil, err
	}
	return plans[index], nil
}

// CompileAll checks m's entities against their sources (srcs[i] for entity i;
// nil leaves it out with a nil plan) and returns their Plans by index. With
// problems it also returns the plans that compiled (nil for others) and all
// problems in file order as mapping.Errors: unknown columns (listing those that
// exist), column types that cannot be keys or cannot sort where an index sorts
// (docs/mapping.md, "Key text of each type"), two widths for one column,
// numbers of two widths after one key prefix across entities, attribute names
// colliding with key or type attributes.
func CompileAll(m *mapping.Mapping, srcs []*Sources) ([]*Plan, error) {
	var errs mapping.Errors
	plans := make([]*Plan, len(m.Entities))
	for i, s := range srcs {
		if s == nil {
			continue
		}
		p, err := compile(m, i, *s)
		if err != nil {
			var es mapping.Errors
			if !errors.As(err, &es) {
				return nil, err
			}
			errs = append(errs, es...)
			continue
		}
		plans[i] = p
	}
	// Among the entities that compiled, whatever the others hold.
	errs = append(errs, checkCollections(m, plans)...)
	if len(errs) > 0 {
		slices.SortStableFunc(errs, func(a, b *mapping.Error) int {
			if a.Line != b.Line {
				return a.Line - b.Line
			}
			return a.Column - b.Column
		})
		return plans, errs
	}
	return plans, nil
}

// compile is Compile without cross-entity checks; problems come in the order
// found.
func compile(m *mapping.Mapping, index int, srcs Sources) (*Plan, error) {
	e := m.Entities[index]
	c := newCompiler(m, e, srcs)
	p := &Plan{entity: e, index: index, typeAttr: m.TypeAttribute,
		typeVal: &types.AttributeValueMemberS{Value: e.Type}, srcCols: srcs.Columns, slots: m.KeySlots(e)}
	templates := keyTemplates(p.slots, m.Library.KeyText())
	p.formats, c.errs = entityKeyFormats(m, templates)
	p.unique = srcs.Unique
	chosen, sets := c.chooseAttributes()
	p.compileStrategies(c)
	created, modified := c.compileLibrary()
	c.checkKeyTemplates(p, templates)
	// Past an unknown column the rest is still checked so one run reports every
	// problem; the plan is then not returned.
	remap := p.readColumns(srcs.Columns, c.need)
	c.buildKeys(p, templates)
	p.findKeyCols()
	p.findSameKeys()
	p.addAttrPlans(chosen, sets, srcs.Columns, remap)
	p.findKinds()
	c.compileNativeKeys(p)
	if len(c.errs) > 0 {
		return nil, c.errs
	}
	p.measureItems()
	p.setLibrary(m, created, modified)
	for _, j := range p.joins {
		if j.join.Kind == extract.JoinParent {
			p.mapSize += len(j.names)
		} else {
			p.mapSize++
		}
	}
	p.query = extract.Query{Source: e.Source, Columns: p.cols}
	for _, j := range p.joins {
		p.query.Joins = append(p.query.Joins, j.join)
	}
	p.query.OrderBy = keyOrder(p.cols)
	return p, nil
}

// Duplicates reports whether a duplicate rule copies a parent column as
// attribute name.
func (p *Plan) Duplicates(name string) bool {
	for _, j := range p.joins {
		if j.join.Kind == extract.JoinParent && slices.Contains(j.names, name) {
			return true
		}
	}
	return false
}

// Derived reports whether key placeholder name is a value the plan derives
// (stable ID or duplicated column), not a source column.
func (p *Plan) Derived(name string) bool {
	return slices.ContainsFunc(p.ids, func(ip idPlan) bool { return ip.attr == name }) || p.Duplicates(name)
}

// keyExtras lists, for an unknown-column message, the stable IDs and duplicated
// columns a placeholder can use.
func (p *Plan) keyExtras() string {
	var names []string
	for _, ip := range p.ids {
		names = append(names, ip.attr)
	}
	for _, j := range p.joins {
		if j.join.Kind == extract.JoinParent {
			for _, n := range j.names {
				if n != "" {
					names = append(names, n)
				}
			}
		}
	}
	if len(names) == 0 {
		return ""
	}
	return "; IDs and duplicated columns: " + strings.Join(names, ", ")
}

// mirrorKey marks the key plans of an entity's mirror item.
const mirrorKey = "\x00mirror"

// columnIndex is the index in cols of the column named name, or -1.
func columnIndex(cols []extract.Column, name string) int {
	return slices.IndexFunc(cols, func(c extract.Column) bool { return c.Name == name })
}

// Query returns what extract.Source.Stream reads for this entity: Items'
// columns, then the joins' values.
func (p *Plan) Query() extract.Query { return p.query }

// Entity returns the entity the plan converts.
func (p *Plan) Entity() *mapping.Entity { return p.entity }

// KeySlots returns the entity's parsed key slots (mapping.Mapping.KeySlots).
func (p *Plan) KeySlots() mapping.KeySlots { return p.slots }

// Items converts one row (values as Query reads them, nil for NULL) and appends
// one item, or two with a mirror (same attributes, the mirror's keys, no GSI
// keys). A *RowError means the row cannot become items: a NULL, empty or
// oversized key, a value DynamoDB cannot hold (over 38 digits, NaN, infinite
// date), a NULL or array in a set, an embed over max_items, an item over 400 KB
// (naming its largest attributes). Other errors mean values do not fit the
// plan. Items borrows a pooled Builder; a goroutine converting many rows does
// better with a Builder of its own.
func (p *Plan) Items(values []any, dst []Item) ([]Item, error) {
	b := builders.Get().(*Builder)
	defer builders.Put(b)
	return b.Items(p, values, dst)
}

func (p *Plan) joinWidth() int {
	n := 0
	for _, j := range p.joins {
		n += j.join.Width()
	}
	return n
}

func (p *Plan) isGSIAttr(attr string) bool { return slices.Contains(p.gsiAttrs, attr) }

// gsiSibling returns the other key attribute of k's GSI.
func (p *Plan) gsiSibling(k keyPlan) string {
	for _, o := range p.keys {
		if o.gsi == k.gsi && o.attr != k.attr {
			return o.attr
		}
	}
	return ""
}

func (p *Plan) rowError(values []any, col int, reason string) *RowError {
	re := &RowError{Entity: p.entity.Name, Reason: reason, SourceKey: p.SourceKey(values)}
	if c, ok := p.valueColumn(col); col >= 0 && ok {
		re.Column = c.Name
	}
	return re
}

// SourceKey returns the row's primary key and key template column values as key
// text (nil for NULL).
func (p *Plan) SourceKey(values []any) map[string]any {
	k := make(map[string]any, len(p.keyCols))
	for _, ci := range p.keyCols {
		c := p.cols[ci]
		v := values[ci]
		if v == nil {
			k[c.Name] = nil
			continue
		}
		if s := scalarFor(c.Type, c.AsText); s.text != nil {
			if t, err := s.text(v); err == nil {
				k[c.Name] = t
				continue
			}
		}
		k[c.Name] = fmt.Sprint(v)
	}
	return k
}

func typeName(c extract.Column) string {
	if c.Array {
		return c.Type + "[]"
	}
	return c.Type
}

func columnNames(cols []extract.Column) []string {
	names := make([]string, len(cols))
	for i, c := range cols {
		names[i] = c.Name
	}
	return names
}

func columnList(cols []extract.Column) string { return strings.Join(columnNames(cols), ", ") }

// columnHint is " (did you mean "x"?)" for the closest column name
// (internal/suggest), or "".
func columnHint(name string, cols []extract.Column) string {
	return suggest.Hint(name, columnNames(cols))
}

// SourceColumns returns every column of the entity's source, read or not.
func (p *Plan) SourceColumns() []extract.Column { return p.srcCols }

// keyOrder returns cols' primary key columns in key order, which a plan's Query
// orders by so each row carries its position; nil without a primary key (a view
// or query).
func keyOrder(cols []extract.Column) []extract.Column {
	var pos []extract.Column
	for _, c := range cols {
		if c.KeyPos > 0 {
			pos = append(pos, c)
		}
	}
	slices.SortFunc(pos, func(a, b extract.Column) int { return a.KeyPos - b.KeyPos })
	return pos
}

// Ordered reports whether the plan reads in primary-key order, so each row ends
// with its Position and the read can be split into ranges and resumed.
func (p *Plan) Ordered() bool { return len(p.query.OrderBy) > 0 }

// Position returns a row's primary key in PostgreSQL's text, read with it, to
// resume after it; nil when the plan reads in no order.
func (p *Plan) Position(values []any) []string {
	return p.query.Position(values)
}

// width is the values in a row the plan's Query reads: columns, joins,
// position.
func (p *Plan) width() int {
	return len(p.cols) + p.joinWidth() + len(p.query.OrderBy)
}
