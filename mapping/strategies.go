package mapping

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// checkStrategies checks the join rules and stable IDs (columns:
// transform.Compile).
func (c *entityCheck) checkStrategies() {
	for _, j := range c.e.Joins() {
		switch j.Kind {
		case JoinDuplicate:
			c.checkDuplicate(j.Path, j.Duplicate)
		case JoinEmbed:
			c.checkEmbed(j.Path, j.Embed)
		case JoinAggregate:
			c.checkAggregate(j.Path, j.Aggregate)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(c.e.IDs)) {
		c.checkID(name, c.e.IDs[name])
	}
}

// checkJoinSource checks for exactly one of table and query, a table if
// tableOnly.
func (c *entityCheck) checkJoinSource(path string, s Source, tableOnly bool) {
	switch {
	case s.Table == "" && s.Query == "":
		c.add(Path(path, KeySource), "missing: expected source.table or source.query")
	case s.Table != "" && s.Query != "":
		c.add(Path(path, KeySource), "both table and query given: expected exactly one")
	case tableOnly && s.Query != "":
		c.add(Path(path, KeySource), "expected source.table: the join must be checked against the table's unique keys")
	}
}

func (c *entityCheck) checkJoin(path string, j Join) {
	if len(j) == 0 {
		c.add(Path(path, KeyJoin), "missing: expected the join columns, e.g. {customer_id: customer_id}")
	}
}

// checkEmbed checks the embed rule at path p; an empty as becomes list.
func (c *entityCheck) checkEmbed(p string, em *Embed) {
	if em == nil {
		c.add(p, "missing: expected source, join and as")
		return
	}
	c.checkJoinSource(p, em.Source, false)
	c.checkJoin(p, em.Join)
	switch em.As {
	case "", EmbedList:
		em.As = EmbedList
		if em.Key != "" {
			c.add(Path(p, KeyKey), "key applies to as: map only")
		}
	case EmbedMap:
		if em.Key == "" {
			c.add(Path(p, KeyKey), "missing: as: map needs the child column whose value keys the map")
		}
	case EmbedSet:
		c.errs = append(c.errs, c.m.validateEmbedSet(p, em)...)
	default:
		c.add(Path(p, KeyAs), "unknown %q: expected list, map or set", em.As)
	}
	for i, o := range em.OrderBy {
		if _, err := ParseOrder(o); err != nil {
			c.add(fmt.Sprintf("%s.%s[%d]", p, KeyOrderBy, i), "%v", err)
		}
	}
	if em.MaxItems < 0 {
		c.add(Path(p, KeyMaxItems), "expected 0 (no bound) or more, got %d", em.MaxItems)
	}
	if em.As != EmbedSet {
		c.errs = append(c.errs, c.m.validateSets(Path(p, KeyAttributes), em.Attributes)...)
	}
}

// checkDuplicate checks a table source (its unique keys must match the join)
// and columns to copy.
func (c *entityCheck) checkDuplicate(p string, d *Duplicate) {
	if d == nil {
		c.add(p, "missing: expected source, join and attributes")
		return
	}
	c.checkJoinSource(p, d.Source, true)
	c.checkJoin(p, d.Join)
	if len(d.Attributes.Select) == 0 {
		c.add(Path(p, KeyAttributes, KeySelect), "missing: expected the parent columns to copy")
	}
	c.errs = append(c.errs, c.m.validateSets(Path(p, KeyAttributes), d.Attributes)...)
}

func (c *entityCheck) checkAggregate(p string, a *Aggregate) {
	if a == nil {
		c.add(p, "missing: expected function, source and join")
		return
	}
	switch a.Function {
	case AggCount:
		if a.Column != "" {
			c.add(Path(p, KeyColumn), "count counts child rows: remove column")
		}
	case AggSum, AggMin, AggMax:
		if a.Column == "" {
			c.add(Path(p, KeyColumn), "missing: %s needs the child column", a.Function)
		}
	default:
		c.add(Path(p, KeyFunction), "unknown function %q: expected count, sum, min or max", a.Function)
	}
	c.checkJoinSource(p, a.Source, false)
	c.checkJoin(p, a.Join)
}

// checkID checks a stable ID: a known kind, a time column and its from columns.
func (c *entityCheck) checkID(name string, id *StableID) {
	p := Path(c.ep, KeyIDs, name)
	if id == nil {
		c.add(p, "missing: expected kind, time and from")
		return
	}
	if id.Kind != IDKSUID && id.Kind != IDULID {
		c.add(Path(p, KeyKind), "unknown kind %q: expected ksuid or ulid", id.Kind)
	}
	if id.Time == "" {
		c.add(Path(p, KeyTime), "missing: expected a timestamp column for the ID's time part")
	}
	if len(id.From) == 0 {
		c.add(Path(p, KeyFrom), "missing: expected the columns that identify the row (its primary key)")
	}
}

func (c *entityCheck) checkMirror() {
	if mi := c.e.Mirror; mi != nil {
		p := Path(c.ep, KeyMirror)
		mi.PKTemplate = c.parse(Path(p, KeyPK), mi.PK, "partition key")
		mi.SKTemplate = c.parseSort(Path(p, KeySK), mi.SK)
	}
}

// Order is one parsed order_by entry.
type Order struct {
	Column string
	Desc   bool
}

// ParseOrder parses "column" or "column ASC|DESC".
func ParseOrder(s string) (Order, error) {
	f := strings.Fields(s)
	switch {
	case len(f) == 1:
		return Order{Column: f[0]}, nil
	case len(f) == 2 && strings.EqualFold(f[1], "desc"):
		return Order{Column: f[0], Desc: true}, nil
	case len(f) == 2 && strings.EqualFold(f[1], "asc"):
		return Order{Column: f[0]}, nil
	}
	return Order{}, fmt.Errorf("order %q: expected a column, optionally followed by ASC or DESC", s)
}

// condToken is a word, a 'quoted' template, or punctuation.
type condToken struct {
	text   string
	quoted bool
}

// lexCondition splits a key condition or filter into words, 'quoted templates',
// parentheses, commas and operators; a ${…} placeholder stays in its word.
func lexCondition(s string) ([]condToken, error) {
	var out []condToken
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n':
			i++
		case c == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return nil, fmt.Errorf("unclosed quote at character %d", i+1)
			}
			out = append(out, condToken{text: s[i+1 : i+1+j], quoted: true})
			i += j + 2
		case c == '(' || c == ')' || c == ',':
			out = append(out, condToken{text: string(c)})
			i++
		case c == '<' || c == '>' || c == '=':
			op := string(c)
			switch {
			case c != '=' && i+1 < len(s) && s[i+1] == '=':
				op += "="
			case c == '<' && i+1 < len(s) && s[i+1] == '>':
				op += ">" // a filter's "not equal"
			}
			out = append(out, condToken{text: op})
			i += len(op)
		default:
			j := i
			for j < len(s) && !strings.ContainsRune(" \t\n()',<>=", rune(s[j])) {
				if strings.HasPrefix(s[j:], "${") {
					if k := strings.IndexByte(s[j:], '}'); k > 0 {
						j += k + 1
						continue
					}
				}
				j++
			}
			out = append(out, condToken{text: s[i:j]})
			i = j
		}
	}
	return out, nil
}

// ParseKeyCondition parses AccessPattern.KeyCondition; a template holding
// spaces, parentheses or commas must be in single quotes.
func ParseKeyCondition(s string) (KeyCondition, error) {
	var kc KeyCondition
	toks, err := lexCondition(s)
	if err != nil {
		return kc, fmt.Errorf("key condition %q: %w", s, err)
	}
	bad := func(what string) (KeyCondition, error) {
		return kc, fmt.Errorf("key condition %q: %s", s, what)
	}
	is := func(i int, text string) bool {
		return i < len(toks) && !toks[i].quoted && strings.EqualFold(toks[i].text, text)
	}
	tpl := func(i int) (Template, bool) {
		if i >= len(toks) || !toks[i].quoted && strings.ContainsAny(toks[i].text, "(),<>=") {
			return Template{}, false
		}
		t, err := ParseTemplate(toks[i].text)
		return t, err == nil
	}
	if len(toks) < 3 || !is(1, "=") {
		return bad(`expected "PK = TEMPLATE", optionally followed by "AND" and a sort key condition`)
	}
	kc.PartitionAttr = toks[0].text
	var ok bool
	if kc.Partition, ok = tpl(2); !ok || kc.Partition.IsZero() {
		return bad("expected a non-empty partition key template after \"=\"")
	}
	rest := toks[3:]
	if len(rest) == 0 {
		return kc, nil
	}
	if !strings.EqualFold(rest[0].text, "AND") || len(rest) < 2 {
		return bad(`expected "AND" and a sort key condition after the partition key`)
	}
	toks = rest[1:]
	// Equalities followed by another condition: a multi-attribute key's.
	for len(toks) > 4 && is(1, "=") && strings.EqualFold(toks[3].text, "AND") {
		v, ok := tpl(2)
		if !ok {
			return bad(fmt.Sprintf("bad template for %s", toks[0].text))
		}
		kc.Equal = append(kc.Equal, KeyTerm{Attr: toks[0].text, Op: "=", Value: v})
		toks = toks[4:]
	}
	sortErr := `expected SK = T, SK < T, SK <= T, SK > T, SK >= T, SK BETWEEN T AND T or begins_with(SK, T)`
	switch {
	case is(0, "begins_with"):
		if len(toks) != 6 || !is(1, "(") || !is(3, ",") || !is(5, ")") {
			return bad(sortErr)
		}
		kc.SortAttr, kc.SortOp = toks[2].text, "begins_with"
		if kc.Sort, ok = tpl(4); !ok {
			return bad("bad begins_with prefix template")
		}
	case len(toks) == 5 && is(1, "BETWEEN") && is(3, "AND"):
		kc.SortAttr, kc.SortOp = toks[0].text, "between"
		var ok2 bool
		kc.Sort, ok = tpl(2)
		kc.SortHigh, ok2 = tpl(4)
		if !ok || !ok2 {
			return bad("bad BETWEEN templates")
		}
	case len(toks) == 3 && slices.Contains([]string{"=", "<", "<=", ">", ">="}, toks[1].text) && !toks[1].quoted:
		kc.SortAttr, kc.SortOp = toks[0].text, toks[1].text
		if kc.Sort, ok = tpl(2); !ok {
			return bad("bad sort key template")
		}
	default:
		return bad(sortErr)
	}
	return kc, nil
}

func (m *Mapping) validatePattern(ap *AccessPattern) Errors {
	var errs Errors
	p := Path(KeyAccessPatterns, ap.Name)
	add := func(path, format string, args ...any) { errs = append(errs, m.Errorf(path, format, args...)) }
	pk, sk := m.Table.PartitionKey, m.Table.SortKey
	// An unknown index leaves the key attributes unknown; the condition is
	// still checked alone.
	knownIndex := true
	if ap.Index != "" {
		g := m.Table.GSI(ap.Index)
		if g == nil {
			add(Path(p, KeyIndex), "unknown index %q: expected one of the table's gsis (%s) or none for the table", ap.Index, strings.Join(m.gsiNames(), ", "))
			knownIndex = false
		} else {
			pk, sk = g.PartitionKey, g.SortKey
		}
	}
	cp := Path(p, KeyKeyCondition)
	for _, be := range Braces(ap.KeyCondition) {
		errs = append(errs, m.errorIn(cp, ap.KeyCondition, be.Offset, be, "key condition %q: %v", ap.KeyCondition, be))
	}
	kc, err := ParseKeyCondition(ap.KeyCondition)
	if err != nil {
		add(cp, "%v", err)
		return errs
	}
	if !knownIndex {
		return errs
	}
	if len(kc.Equal) > 0 {
		add(cp, "%d conditions: a key condition on %s is the partition key's and at most one on the sort key (only a GSI with partition_keys takes more)", len(kc.Terms()), indexName(ap.Index))
	}
	if kc.PartitionAttr != pk {
		add(cp, "the condition names %q; the partition key of %s is %q", kc.PartitionAttr, indexName(ap.Index), pk)
	}
	if kc.SortAttr != "" && sk == "" {
		add(cp, "the condition names a sort key %q; %s has no sort key: expected %s = … alone", kc.SortAttr, indexName(ap.Index), pk)
	} else if kc.SortAttr != "" && kc.SortAttr != sk {
		add(cp, "the condition names %q; the sort key of %s is %q", kc.SortAttr, indexName(ap.Index), sk)
	}
	ap.Condition = kc
	return append(errs, m.validateFilter(ap, pk, sk)...)
}

// validateFilter parses ap's filter, if any, into ap.FilterExpr; it may not
// name keys, the key attributes of ap's index.
// https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Query.FilterExpression.html
func (m *Mapping) validateFilter(ap *AccessPattern, keys ...string) Errors {
	if ap.Filter == "" {
		return nil
	}
	fp := Path(KeyAccessPatterns, ap.Name, KeyFilter)
	f, err := ParseFilter(ap.Filter)
	if err != nil {
		return Errors{m.Errorf(fp, "%v", err)}
	}
	var errs Errors
	for _, a := range f.Attrs() {
		if a != "" && slices.Contains(keys, a) {
			errs = append(errs, m.Errorf(fp, "the filter names %q, a key attribute of %s: DynamoDB takes key attributes in the key condition only", a, indexName(ap.Index)))
		}
	}
	ap.FilterExpr = f
	return errs
}

func indexName(index string) string {
	if index == "" {
		return "the table"
	}
	return "index " + index
}

// Columns returns the templates' placeholders in order, without repeats: the
// caller's parameters.
func (kc KeyCondition) Columns() []string {
	var out []string
	var tpls []Template
	for _, t := range kc.Terms() {
		tpls = append(tpls, t.Value, t.ValueHigh)
	}
	for _, t := range tpls {
		for _, c := range t.Columns() {
			if !slices.Contains(out, c) {
				out = append(out, c)
			}
		}
	}
	return out
}
