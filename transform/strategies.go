package transform

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/oklog/ulid/v2"
	"github.com/segmentio/ksuid"

	"github.com/pg2dynamo/pg2dynamo/extract"
	"github.com/pg2dynamo/pg2dynamo/mapping"
)

// Sources is what Compile knows of an entity's sources
// (extract.Source.DescribeSource and UniqueKeys).
type Sources struct {
	// Columns of the entity's own source.
	Columns []extract.Column
	// Embed holds the columns of each embed's child source, by attribute.
	Embed map[string][]extract.Column
	// Duplicate holds each duplicate's parent columns by index, DuplicateKeys
	// the parent's unique keys.
	Duplicate     [][]extract.Column
	DuplicateKeys [][]extract.UniqueKey
	// Aggregate holds the columns of each aggregate's child source.
	Aggregate map[string][]extract.Column
	// Unique holds the own source's unique keys (primary key and unique
	// indexes), for KeysUnique.
	Unique []extract.UniqueKey
}

// chosenAttr is a column that becomes an attribute.
type chosenAttr struct {
	col  int
	name string
}

// chooseAttributes applies select, exclude and rename to cols, reporting
// unknown columns through unknown.
func chooseAttributes(cols []extract.Column, a mapping.Attributes, path string, unknown func(path, col string, cols []extract.Column)) []chosenAttr {
	chosen := map[int]bool{}
	if len(a.Select) > 0 {
		for i, c := range a.Select {
			if j := columnIndex(cols, c); j >= 0 {
				chosen[j] = true
			} else {
				unknown(fmt.Sprintf("%s.%s[%d]", path, mapping.KeySelect, i), c, cols)
			}
		}
	} else {
		for i := range cols {
			chosen[i] = true
		}
	}
	for i, c := range a.Exclude {
		if j := columnIndex(cols, c); j >= 0 {
			delete(chosen, j)
		} else {
			unknown(fmt.Sprintf("%s.%s[%d]", path, mapping.KeyExclude, i), c, cols)
		}
	}
	for _, c := range slices.Sorted(maps.Keys(a.Rename)) {
		if columnIndex(cols, c) < 0 {
			unknown(mapping.Path(path, mapping.KeyRename, c), c, cols)
		}
	}
	var out []chosenAttr
	for i, c := range cols {
		if chosen[i] {
			name := c.Name
			if to, ok := a.Rename[c.Name]; ok {
				name = to
			}
			out = append(out, chosenAttr{col: i, name: name})
		}
	}
	return out
}

// joinPlan converts the values one extract.Join adds to a row.
type joinPlan struct {
	join extract.Join
	// parent: attribute per parent column (name "" when not copied).
	names    []string
	converts []func(any) (types.AttributeValue, error)
	// embed
	attr     string
	asMap    bool
	keyField int
	keyText  func(any) (string, error)
	maxItems int
	// aggregate
	convert func(any) (types.AttributeValue, error)
	// set: an embed with as: set, whose one column's values make the set
	set *setConv
}

// idPlan builds one stable ID attribute.
type idPlan struct {
	attr string
	kind string
	time int   // column index
	from []int // column indexes
	text []func(any) (string, error)
}

// aggregateType is the PostgreSQL type of fn over a column of type typ.
func aggregateType(fn, typ string) string {
	switch fn {
	case mapping.AggCount:
		return "int8"
	case mapping.AggSum:
		switch typ {
		case "int2", "int4":
			return "int8"
		case "int8", "numeric":
			return "numeric"
		}
	}
	return typ
}

// compileStrategies adds the join rules to p in mapping.Entity.Joins order,
// then the stable IDs; rules undefined by the mapping's own problems are left
// out (mapping.ParsePartial).
func (p *Plan) compileStrategies(c *compiler) {
	for _, j := range c.e.Joins() {
		if !j.Defined() {
			continue
		}
		if jp, ok := c.join(j); ok {
			p.joins = append(p.joins, jp)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(c.e.IDs)) {
		if id := c.e.IDs[name]; id != nil {
			p.ids = append(p.ids, c.idPlan(name, id))
		}
	}
}

// join compiles defined rule j, returning false (having reported why) when it
// adds no join.
func (c *compiler) join(j mapping.JoinRule) (joinPlan, bool) {
	switch j.Kind {
	case mapping.JoinDuplicate:
		return c.duplicateJoin(j), true
	case mapping.JoinEmbed:
		return c.embedJoin(j), true
	case mapping.JoinAggregate:
		return c.aggregateJoin(j)
	}
	c.add(j.Path, "join kind %q is not compiled", j.Kind) // TestPrepareDescribesEveryJoin fails
	return joinPlan{}, false
}

// SetJoin records rule j's source columns and unique keys (wanted for a
// j.Parent) where Compile reads them.
func (s *Sources) SetJoin(j mapping.JoinRule, cols []extract.Column, keys []extract.UniqueKey) {
	switch j.Kind {
	case mapping.JoinDuplicate:
		for len(s.Duplicate) <= j.Index {
			s.Duplicate = append(s.Duplicate, nil)
			s.DuplicateKeys = append(s.DuplicateKeys, nil)
		}
		s.Duplicate[j.Index], s.DuplicateKeys[j.Index] = cols, keys
	case mapping.JoinEmbed:
		if s.Embed == nil {
			s.Embed = map[string][]extract.Column{}
		}
		s.Embed[j.Attr] = cols
	case mapping.JoinAggregate:
		if s.Aggregate == nil {
			s.Aggregate = map[string][]extract.Column{}
		}
		s.Aggregate[j.Attr] = cols
	}
}

// joinOn returns j's (other's, entity's) column pairs, having checked both
// sides' columns (the entity's then read).
func (c *compiler) joinOn(path string, j mapping.Join, other []extract.Column) [][2]string {
	pairs := j.Pairs()
	for _, pr := range pairs {
		if columnIndex(other, pr[0]) < 0 {
			c.unknown(mapping.Path(path, mapping.KeyJoin, pr[0]), pr[0], other)
		}
		c.knownNeeded(mapping.Path(path, mapping.KeyJoin, pr[0]), pr[1])
	}
	return pairs
}

// duplicateJoin compiles a duplicate: a join on a unique key of the parent, and
// the columns copied.
func (c *compiler) duplicateJoin(j mapping.JoinRule) joinPlan {
	d, path, i := j.Duplicate, j.Path, j.Index
	cols := c.srcs.Duplicate[i]
	on := c.joinOn(path, d.Join, cols)
	parentCols := make([]string, len(on))
	for k, pr := range on {
		parentCols[k] = pr[0]
	}
	slices.Sort(parentCols)
	// Joined on a unique key, a row has at most one parent.
	unique := slices.ContainsFunc(c.srcs.DuplicateKeys[i], func(k extract.UniqueKey) bool {
		for _, col := range k.Columns {
			if !slices.Contains(parentCols, col) {
				return false
			}
		}
		return true
	})
	if !unique {
		c.add(mapping.Path(path, mapping.KeyJoin), "%s has no primary key or unique index on (%s): each row must have at most one parent to copy from",
			d.Source, joinList(parentCols))
	}
	jp := joinPlan{join: extract.Join{Kind: extract.JoinParent, Source: d.Source, On: on}}
	ap := mapping.Path(path, mapping.KeyAttributes)
	sets := compileSets(cols, d.Attributes, ap, c.add, c.unknown)
	for _, a := range chooseAttributes(cols, d.Attributes, ap, c.unknown) {
		c.claim(ap, a.name, "a duplicated column")
		col := cols[a.col]
		jp.join.Columns = append(jp.join.Columns, col)
		jp.names = append(jp.names, a.name)
		jp.converts = append(jp.converts, convertOf(col, sets[a.col]))
	}
	return jp
}

// embedJoin compiles an embed: a join on the child source, limited to
// max_items+1 rows in order_by order, and each element's columns.
func (c *compiler) embedJoin(j mapping.JoinRule) joinPlan {
	em, path, name := j.Embed, j.Path, j.Attr
	c.claim(path, name, "an embed")
	cols := c.srcs.Embed[name]
	jp := joinPlan{attr: name, asMap: em.As == mapping.EmbedMap, maxItems: em.MaxItems, keyField: -1,
		join: extract.Join{Kind: extract.JoinEmbed, Source: em.Source, On: c.joinOn(path, em.Join, cols), Limit: em.MaxItems + 1}}
	if em.MaxItems == 0 {
		jp.join.Limit = 0
	}
	for i, o := range em.OrderBy {
		ord, _ := mapping.ParseOrder(o)
		if columnIndex(cols, ord.Column) < 0 {
			c.unknown(fmt.Sprintf("%s.%s[%d]", path, mapping.KeyOrderBy, i), ord.Column, cols)
		}
		jp.join.OrderBy = append(jp.join.OrderBy, ord)
	}
	c.embedColumns(&jp, path, em, cols)
	if jp.asMap {
		c.embedMapKey(&jp, path, em, cols)
	}
	return jp
}

// embedColumns adds each element's child columns to jp under their names, and
// for as: set its one column's set.
func (c *compiler) embedColumns(jp *joinPlan, path string, em *mapping.Embed, cols []extract.Column) {
	ap := mapping.Path(path, mapping.KeyAttributes)
	inElement := map[string]string{}
	sets := compileSets(cols, em.Attributes, ap, c.add, c.unknown)
	for _, a := range chooseAttributes(cols, em.Attributes, ap, c.unknown) {
		if other, dup := inElement[a.name]; dup {
			c.add(ap, "child columns %q and %q both become attribute %q", other, cols[a.col].Name, a.name)
			continue
		}
		inElement[a.name] = cols[a.col].Name
		jp.join.Columns = append(jp.join.Columns, cols[a.col])
		jp.names = append(jp.names, a.name)
		jp.converts = append(jp.converts, convertOf(cols[a.col], sets[a.col]))
		if em.As == mapping.EmbedSet {
			if sc, ok := compileEmbedSet(fmt.Sprintf("%s.%s.%s[0]", path, mapping.KeyAttributes, mapping.KeySelect), cols[a.col], c.add); ok {
				jp.set = &sc
			}
		}
	}
}

// embedMapKey sets an as: map embed's key column, read even when not an element
// attribute.
func (c *compiler) embedMapKey(jp *joinPlan, path string, em *mapping.Embed, cols []extract.Column) {
	k := columnIndex(cols, em.Key)
	switch {
	case k < 0:
		c.unknown(mapping.Path(path, mapping.KeyKey), em.Key, cols)
	case cols[k].Array || scalarFor(cols[k].Type, cols[k].AsText).text == nil:
		c.add(mapping.Path(path, mapping.KeyKey), "column %q of type %s cannot key a map", em.Key, typeName(cols[k]))
	default:
		jp.keyField = columnIndex(jp.join.Columns, em.Key)
		if jp.keyField < 0 {
			jp.keyField = len(jp.join.Columns)
			jp.join.Columns = append(jp.join.Columns, cols[k])
			jp.names = append(jp.names, "")
			jp.converts = append(jp.converts, nil)
		}
		jp.keyText = scalarFor(cols[k].Type, cols[k].AsText).text
	}
}

// aggregateJoin compiles an aggregate: a join computing its function over its
// column; false (reported) when the function cannot take the column.
func (c *compiler) aggregateJoin(j mapping.JoinRule) (joinPlan, bool) {
	a, path, name := j.Aggregate, j.Path, j.Attr
	c.claim(path, name, "an aggregate")
	cols := c.srcs.Aggregate[name]
	jp := joinPlan{attr: name, join: extract.Join{Kind: extract.JoinAggregate, Source: a.Source,
		On: c.joinOn(path, a.Join, cols), Function: a.Function, Column: a.Column}}
	typ := aggregateType(a.Function, "")
	if a.Function != mapping.AggCount {
		k := columnIndex(cols, a.Column)
		if k < 0 {
			c.unknown(mapping.Path(path, mapping.KeyColumn), a.Column, cols)
			return joinPlan{}, false
		}
		col := cols[k]
		if a.Function == mapping.AggSum && !slices.Contains([]string{"int2", "int4", "int8", "numeric", "float4", "float8"}, col.Type) || col.Array || col.AsText {
			c.add(mapping.Path(path, mapping.KeyColumn), "cannot %s column %q of type %s", a.Function, col.Name, typeName(col))
			return joinPlan{}, false
		}
		typ = aggregateType(a.Function, col.Type)
	}
	jp.convert = scalarFor(typ, false).attr
	return jp, true
}

// idPlan compiles stable ID name: its time column (date or timestamp) and from
// columns, all read from the own source; indexes are into c.cols until
// readColumns.
func (c *compiler) idPlan(name string, id *mapping.StableID) idPlan {
	path := mapping.Path(c.ep, mapping.KeyIDs, name)
	c.claim(path, name, "an ID")
	ip := idPlan{attr: name, kind: id.Kind, time: -1}
	if c.knownNeeded(mapping.Path(path, mapping.KeyTime), id.Time) {
		ip.time = columnIndex(c.cols, id.Time)
		if col := c.cols[ip.time]; col.Array || !slices.Contains([]string{"date", "timestamp", "timestamptz"}, col.Type) {
			c.add(mapping.Path(path, mapping.KeyTime), "column %q of type %s: expected a date or timestamp", col.Name, typeName(col))
		}
	}
	for i, f := range id.From {
		fp := fmt.Sprintf("%s.%s[%d]", path, mapping.KeyFrom, i)
		if c.knownNeeded(fp, f) {
			col := c.cols[columnIndex(c.cols, f)]
			s := scalarFor(col.Type, col.AsText)
			if col.Array || s.text == nil {
				c.add(fp, "column %q of type %s cannot identify a row", col.Name, typeName(col))
				continue
			}
			ip.from = append(ip.from, columnIndex(c.cols, f))
			ip.text = append(ip.text, s.text)
		}
	}
	return ip
}

func joinList(cols []string) string { return strings.Join(cols, ", ") }

// applyJoins adds the joins' attributes to attrs from values[off:].
func (p *Plan) applyJoins(values []any, attrs map[string]types.AttributeValue) (col string, reason string) {
	off := len(p.cols)
	for _, j := range p.joins {
		vals := values[off : off+j.join.Width()]
		off += j.join.Width()
		switch j.join.Kind {
		case extract.JoinParent:
			for i, v := range vals {
				if v == nil || j.names[i] == "" {
					continue
				}
				av, err := j.converts[i](v)
				if err != nil {
					return j.join.Columns[i].Name, fmt.Sprintf("duplicated from %s: %v", j.join.Source, err)
				}
				if av != nil { // nil: an empty set
					attrs[j.names[i]] = av
				}
			}
		case extract.JoinEmbed:
			av, reason := j.embed(vals[0], vals[1])
			if reason != "" {
				return "", fmt.Sprintf("embed %s: %s", j.attr, reason)
			}
			if av != nil { // nil: as: set without children
				attrs[j.attr] = av
			}
		case extract.JoinAggregate:
			if vals[0] == nil {
				continue
			}
			av, err := j.convert(vals[0])
			if err != nil {
				return "", fmt.Sprintf("aggregate %s: %v", j.attr, err)
			}
			attrs[j.attr] = av
		}
	}
	return "", ""
}

// embed converts an embed's records: a list of maps, or a map of maps keyed by
// the key column (empty without children); for as: set, the set, nil without
// children.
func (j joinPlan) embed(items, count any) (types.AttributeValue, string) {
	n, _ := count.(int64)
	if j.maxItems > 0 && n > int64(j.maxItems) {
		return nil, fmt.Sprintf("%d child rows, over max_items %d", n, j.maxItems)
	}
	records, _ := items.([]any)
	if j.set != nil {
		return j.embedSet(records)
	}
	var list []types.AttributeValue
	var byKey map[string]types.AttributeValue
	if j.asMap {
		byKey = make(map[string]types.AttributeValue, len(records))
	} else {
		list = make([]types.AttributeValue, 0, len(records))
	}
	for r, rec := range records {
		fields, ok := rec.([]any)
		if !ok || len(fields) != len(j.join.Columns) {
			return nil, fmt.Sprintf("child row %d: unexpected record %T", r+1, rec)
		}
		m := make(map[string]types.AttributeValue, len(fields))
		for f, v := range fields {
			if v == nil || j.names[f] == "" {
				continue
			}
			av, err := j.converts[f](v)
			if err != nil {
				return nil, fmt.Sprintf("child row %d, column %q: %v", r+1, j.join.Columns[f].Name, err)
			}
			if av != nil { // nil: an empty set
				m[j.names[f]] = av
			}
		}
		el := &types.AttributeValueMemberM{Value: m}
		if !j.asMap {
			list = append(list, el)
			continue
		}
		kv := fields[j.keyField]
		if kv == nil {
			return nil, fmt.Sprintf("child row %d: NULL in map key column %q", r+1, j.join.Columns[j.keyField].Name)
		}
		k, err := j.keyText(kv)
		if err != nil {
			return nil, fmt.Sprintf("child row %d: map key: %v", r+1, err)
		}
		if _, dup := byKey[k]; dup {
			return nil, fmt.Sprintf("two child rows have map key %q", k)
		}
		byKey[k] = el
	}
	if j.asMap {
		return &types.AttributeValueMemberM{Value: byKey}, ""
	}
	return &types.AttributeValueMemberL{Value: list}, ""
}

// ksuidEpoch is the KSUID time origin (2014-05-13T16:53:20Z) in Unix seconds.
const ksuidEpoch = 1400000000

// stableID renders the ID: time from the time column, random part the first
// bytes of SHA-256 over the from columns' key text.
func (ip idPlan) stableID(values []any) (string, int, string) {
	tv, ok := values[ip.time].(time.Time)
	if !ok {
		return "", ip.time, "NULL or infinite time for a stable ID"
	}
	h := sha256.New()
	for i, c := range ip.from {
		if values[c] == nil {
			return "", c, "NULL in a stable ID column"
		}
		s, err := ip.text[i](values[c])
		if err != nil {
			return "", c, err.Error()
		}
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	sum := h.Sum(nil)
	if ip.kind == mapping.IDULID {
		id, err := ulid.New(ulid.Timestamp(tv), bytes.NewReader(sum[:10]))
		if err != nil {
			return "", ip.time, fmt.Sprintf("ULID: %v", err)
		}
		return id.String(), -1, ""
	}
	// KSUID time is 32-bit seconds since 2014-05-13: outside that it would wrap
	// and stop sorting by time.
	if secs := tv.Unix() - ksuidEpoch; secs < 0 || secs > math.MaxUint32 {
		return "", ip.time, fmt.Sprintf("KSUID: time %s is outside 2014-05-13…2150-06-19; use kind: ulid", tv.UTC().Format(time.RFC3339))
	}
	id, err := ksuid.FromParts(tv, sum[:16])
	if err != nil {
		return "", ip.time, fmt.Sprintf("KSUID: %v", err)
	}
	return id.String(), -1, ""
}
