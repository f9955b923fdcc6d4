package mapping

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
)

// validateStrategies checks an entity's embed, duplicate, aggregates, ids
// and mirror rules. Column names are checked later, against the database
// (transform.Compile).
func (m *Mapping) validateStrategies(e *Entity, parse func(path, text, what string) Template) Errors {
	var errs Errors
	ep := Path(KeyEntities, e.Name)
	add := func(path, format string, args ...any) { errs = append(errs, m.Errorf(path, format, args...)) }
	source := func(path string, s Source, tableOnly bool) {
		switch {
		case s.Table == "" && s.Query == "":
			add(Path(path, KeySource), "missing: expected source.table or source.query")
		case s.Table != "" && s.Query != "":
			add(Path(path, KeySource), "both table and query given: expected exactly one")
		case tableOnly && s.Query != "":
			add(Path(path, KeySource), "expected source.table: the join must be checked against the table's unique keys")
		}
	}
	join := func(path string, j Join) {
		if len(j) == 0 {
			add(Path(path, KeyJoin), "missing: expected the join columns, e.g. {customer_id: customer_id}")
		}
	}

	for _, name := range sortedKeys(e.Embed) {
		em, p := e.Embed[name], Path(ep, KeyEmbed, name)
		if em == nil {
			add(p, "missing: expected source, join and as")
			continue
		}
		source(p, em.Source, false)
		join(p, em.Join)
		switch em.As {
		case "", "list":
			em.As = "list"
			if em.Key != "" {
				add(Path(p, KeyKey), "key applies to as: map only")
			}
		case "map":
			if em.Key == "" {
				add(Path(p, KeyKey), "missing: as: map needs the child column whose value keys the map")
			}
		default:
			add(Path(p, KeyAs), "unknown %q: expected list or map", em.As)
		}
		for i, o := range em.OrderBy {
			if _, err := ParseOrder(o); err != nil {
				add(fmt.Sprintf("%s.%s[%d]", p, KeyOrderBy, i), "%v", err)
			}
		}
		if em.MaxItems < 0 {
			add(Path(p, KeyMaxItems), "expected 0 (no bound) or more, got %d", em.MaxItems)
		}
	}
	for i, d := range e.Duplicate {
		p := fmt.Sprintf("%s.%s[%d]", ep, KeyDuplicate, i)
		if d == nil {
			add(p, "missing: expected source, join and attributes")
			continue
		}
		source(p, d.Source, true)
		join(p, d.Join)
		if len(d.Attributes.Select) == 0 {
			add(Path(p, KeyAttributes, KeySelect), "missing: expected the parent columns to copy")
		}
	}
	for _, name := range sortedKeys(e.Aggregates) {
		a, p := e.Aggregates[name], Path(ep, KeyAggregates, name)
		if a == nil {
			add(p, "missing: expected function, source and join")
			continue
		}
		switch a.Function {
		case AggCount:
			if a.Column != "" {
				add(Path(p, KeyColumn), "count counts child rows: remove column")
			}
		case AggSum, AggMin, AggMax:
			if a.Column == "" {
				add(Path(p, KeyColumn), "missing: %s needs the child column", a.Function)
			}
		default:
			add(Path(p, KeyFunction), "unknown function %q: expected count, sum, min or max", a.Function)
		}
		source(p, a.Source, false)
		join(p, a.Join)
	}
	for _, name := range sortedKeys(e.IDs) {
		id, p := e.IDs[name], Path(ep, KeyIDs, name)
		if id == nil {
			add(p, "missing: expected kind, time and from")
			continue
		}
		if id.Kind != IDKSUID && id.Kind != IDULID {
			add(Path(p, KeyKind), "unknown kind %q: expected ksuid or ulid", id.Kind)
		}
		if id.Time == "" {
			add(Path(p, KeyTime), "missing: expected a timestamp column for the ID's time part")
		}
		if len(id.From) == 0 {
			add(Path(p, KeyFrom), "missing: expected the columns that identify the row (its primary key)")
		}
	}
	if mi := e.Mirror; mi != nil {
		p := Path(ep, KeyMirror)
		mi.PKTemplate = parse(Path(p, KeyPK), mi.PK, "partition key")
		mi.SKTemplate = parse(Path(p, KeySK), mi.SK, "sort key")
	}
	return errs
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

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

var (
	condHashRE    = regexp.MustCompile(`^\s*(\S+)\s*=\s*(\S+)\s*$`)
	condAndRE     = regexp.MustCompile(`(?i)^\s*(\S+)\s*=\s*(\S+)\s+AND\s+(.+?)\s*$`)
	condBeginsRE  = regexp.MustCompile(`(?i)^begins_with\(\s*([^,\s]+)\s*,\s*([^)\s]+)\s*\)$`)
	condBetweenRE = regexp.MustCompile(`(?i)^(\S+)\s+BETWEEN\s+(\S+)\s+AND\s+(\S+)$`)
	condCmpRE     = regexp.MustCompile(`^(\S+?)\s*(=|<=|>=|<|>)\s*(\S+)$`)
)

// ParseKeyCondition parses an access pattern's key condition (see
// AccessPattern.KeyCondition). Templates may be written in single quotes.
func ParseKeyCondition(s string) (KeyCondition, error) {
	var kc KeyCondition
	tpl := func(text string) (Template, error) {
		return ParseTemplate(strings.Trim(text, "'"))
	}
	var pkText, rest string
	if g := condAndRE.FindStringSubmatch(s); g != nil {
		kc.PartitionAttr, pkText, rest = g[1], g[2], g[3]
	} else if g := condHashRE.FindStringSubmatch(s); g != nil {
		kc.PartitionAttr, pkText = g[1], g[2]
	} else {
		return kc, fmt.Errorf("key condition %q: expected \"PK = TEMPLATE\", optionally followed by \"AND\" and a sort key condition", s)
	}
	var err error
	if kc.Partition, err = tpl(pkText); err != nil {
		return kc, fmt.Errorf("partition key template: %w", err)
	}
	if rest == "" {
		return kc, nil
	}
	var texts []string
	switch {
	case condBeginsRE.MatchString(rest):
		g := condBeginsRE.FindStringSubmatch(rest)
		kc.SortAttr, kc.SortOp, texts = g[1], "begins_with", g[2:3]
	case condBetweenRE.MatchString(rest):
		g := condBetweenRE.FindStringSubmatch(rest)
		kc.SortAttr, kc.SortOp, texts = g[1], "between", g[2:4]
	case condCmpRE.MatchString(rest):
		g := condCmpRE.FindStringSubmatch(rest)
		kc.SortAttr, kc.SortOp, texts = g[1], g[2], g[3:4]
	default:
		return kc, fmt.Errorf("sort key condition %q: expected SK = T, SK < T, SK <= T, SK > T, SK >= T, SK BETWEEN T AND T or begins_with(SK, T)", rest)
	}
	if kc.Sort, err = tpl(texts[0]); err != nil {
		return kc, fmt.Errorf("sort key template: %w", err)
	}
	if len(texts) == 2 {
		if kc.SortHigh, err = tpl(texts[1]); err != nil {
			return kc, fmt.Errorf("sort key template: %w", err)
		}
	}
	return kc, nil
}

func (m *Mapping) validatePattern(ap *AccessPattern) Errors {
	var errs Errors
	p := Path(KeyAccessPatterns, ap.Name)
	add := func(path, format string, args ...any) { errs = append(errs, m.Errorf(path, format, args...)) }
	pk, sk := m.Table.PartitionKey, m.Table.SortKey
	if ap.Index != "" {
		g := m.Table.GSI(ap.Index)
		if g == nil {
			add(Path(p, KeyIndex), "unknown index %q: expected one of the table's gsis (%s) or none for the table", ap.Index, strings.Join(m.gsiNames(), ", "))
			return errs
		}
		pk, sk = g.PartitionKey, g.SortKey
	}
	kc, err := ParseKeyCondition(ap.KeyCondition)
	if err != nil {
		add(Path(p, KeyKeyCondition), "%v", err)
		return errs
	}
	if kc.PartitionAttr != pk {
		add(Path(p, KeyKeyCondition), "the condition names %q; the partition key of %s is %q", kc.PartitionAttr, indexName(ap.Index), pk)
	}
	if kc.SortAttr != "" && kc.SortAttr != sk {
		add(Path(p, KeyKeyCondition), "the condition names %q; the sort key of %s is %q", kc.SortAttr, indexName(ap.Index), sk)
	}
	ap.Condition = kc
	return errs
}

func indexName(index string) string {
	if index == "" {
		return "the table"
	}
	return "index " + index
}

// Columns returns the placeholders of the pattern's templates in order,
// without repeats: the parameters a caller supplies.
func (kc KeyCondition) Columns() []string {
	var out []string
	for _, t := range []Template{kc.Partition, kc.Sort, kc.SortHigh} {
		for _, c := range t.Columns() {
			if !slices.Contains(out, c) {
				out = append(out, c)
			}
		}
	}
	return out
}
