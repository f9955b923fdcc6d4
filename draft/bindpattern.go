package draft

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/pg2dynamo/pg2dynamo/mapping"
)

// pattern translates one access pattern of e. GetItem reads the item by
// its keys; a Query without a range condition reads the partition,
// narrowed by begins_with of the sort key's literal prefix (ORDER# of
// ORDER#{order_date}) as the design's generated code does, or whole for
// mixed_data (the item collection). A range condition puts the design's
// range value where the sort key's first field is: lower bounds are the
// sort key up to that field, upper bounds the whole sort key, so that the
// Query verify runs with a row's parameters reads that row's item. Writes
// and Scans are not translated: verify runs reads by key.
func (g *binder) pattern(e *BoundEntity, p *MCPPattern) {
	de := e.Design
	if p.Operation != "GetItem" && p.Operation != "Query" {
		g.b.Untranslated = append(g.b.Untranslated, fmt.Sprintf("%s (entity %s): %s", p.Name, de.Name, untranslated(p.Operation)))
		return
	}
	bp := &BoundPattern{Name: g.patternName(de, p), Index: p.IndexName, Design: p, Entity: de}
	bp.Description = strings.TrimSpace(fmt.Sprintf("%s (design pattern %d: %s %s)", p.Description, p.ID, p.Operation, p.RangeCondition))
	bp.Description = strings.Replace(bp.Description, " )", ")", 1)
	g.b.Patterns = append(g.b.Patterns, bp)
	cond, why := g.condition(e, p)
	var filter string
	if why == "" && p.Filter != nil {
		filter, why = filterOf(e, p.Filter)
	}
	if why != "" {
		bp.Why = why
		g.unbound("access pattern "+p.Name, "%s", why)
		return
	}
	bp.KeyCondition, bp.Filter = cond, filter
}

// filterOf translates a design's filter_expression into the mapping's
// filter over e's attributes. Each parameter is named as the column of its
// field, so that verify samples it from a row. A field that is no column
// of e's table, or compared by size, leaves the pattern unbound.
func filterOf(e *BoundEntity, f *MCPFilter) (string, string) {
	var conds []string
	for _, c := range f.Conditions {
		col, ok := e.keyName[c.Field]
		needsParam := c.Function != "attribute_exists" && c.Function != "attribute_not_exists"
		switch {
		case c.Function == "size":
			return "", fmt.Sprintf("its filter compares size(%s) with a count, which no column gives for verify to take from a row", c.Field)
		case needsParam && (!ok || e.dup[c.Field]):
			return "", fmt.Sprintf("its filter compares field %s, which is no column of %s: verify could not take a value for it from a row", c.Field, e.Table.Name)
		}
		p := "${" + col.Name + "}"
		switch {
		case !needsParam:
			conds = append(conds, fmt.Sprintf("%s(%s)", c.Function, c.Field))
		case c.Function != "":
			conds = append(conds, fmt.Sprintf("%s(%s, %s)", c.Function, c.Field, p))
		case c.Operator == "between":
			conds = append(conds, fmt.Sprintf("%s BETWEEN %s AND %s", c.Field, p, p))
		case c.Operator == "in":
			conds = append(conds, fmt.Sprintf("%s IN (%s)", c.Field, strings.Join(slices.Repeat([]string{p}, max(len(c.Params), 1)), ", ")))
		default:
			conds = append(conds, fmt.Sprintf("%s %s %s", c.Field, c.Operator, p))
		}
	}
	op := " AND "
	if strings.EqualFold(f.LogicalOperator, "OR") {
		op = " OR "
	}
	return strings.Join(conds, op), ""
}

func untranslated(op string) string {
	switch op {
	case "Scan":
		return "a Scan reads the whole table; verify's own Scan compares every item"
	case "BatchGetItem":
		return "a batch of GetItems by keys the application holds; the entity's GetItem pattern, if any, is checked"
	}
	return "a write (" + op + "); the draft migrates and verifies reads"
}

// patternName is the design's name, or, when another entity's pattern
// has it already, the entity's name before it.
func (g *binder) patternName(de *MCPEntity, p *MCPPattern) string {
	if !slices.ContainsFunc(g.b.Patterns, func(b *BoundPattern) bool { return b.Name == p.Name }) {
		return p.Name
	}
	return de.Name + "_" + p.Name
}

// condition is p's key condition over e's templates, or why there is
// none.
func (g *binder) condition(e *BoundEntity, p *MCPPattern) (string, string) {
	de := e.Design
	if e.Table == nil {
		return "", fmt.Sprintf("its entity %s is not bound", de.Name)
	}
	pkAttr, skAttr, pkT, skT := g.b.PartitionKey, g.b.SortKey, de.PKTemplate, de.SKTemplate
	if p.IndexName != "" {
		m, gsi := de.GSIMapping(p.IndexName), g.b.Design.GSI(p.IndexName)
		switch {
		case p.Operation == "GetItem":
			return "", "a GetItem cannot read an index: make it a Query"
		case m == nil:
			return "", fmt.Sprintf("entity %s has no gsi_mapping for %s", de.Name, p.IndexName)
		case gsi != nil && g.b.multi(*gsi) && !slices.Contains(e.multi, p.IndexName):
			return "", fmt.Sprintf("the entity's templates in %s are unbound", p.IndexName)
		case gsi != nil && g.b.multi(*gsi):
			return g.multiCondition(e, p, *gsi)
		case e.index(p.IndexName) == nil:
			return "", fmt.Sprintf("the entity's templates in %s are unbound", p.IndexName)
		}
		pkAttr, skAttr, pkT, skT = gsi.PartitionKey, gsi.SortKey, m.PKTemplate, m.SKTemplate
	}
	var sort string
	var bounds []string
	switch rc := p.RangeCondition; {
	case p.Operation == "GetItem" && rc != "":
		return "", "a GetItem has no range condition: make it a Query"
	case p.Operation == "GetItem" && skAttr == "":
		// A table without a sort key: the partition key alone.
	case p.Operation == "GetItem":
		sort, bounds = "=", []string{skT}
	case rc == "" && p.ReturnType == "mixed_data":
		// The item collection, every entity in it: no sort key condition.
	case rc == "":
		if lit := literalPrefix(skT); skAttr != "" && lit != "" {
			sort, bounds = "begins_with", []string{lit}
		}
	case skAttr == "" || len(templateFields(skT)) == 0:
		return "", fmt.Sprintf("a %s range condition needs a sort key with a field; %s has none", rc, cmp.Or(skAttr, "the index's key"))
	case g.b.keyType(skAttr) == mapping.TypeNumber && rc == "begins_with":
		return "", fmt.Sprintf("begins_with on %s, a number sort key: DynamoDB takes it on strings and binaries only", skAttr)
	case g.b.keyType(skAttr) == mapping.TypeNumber && rc == "between":
		// The number itself bounds both ends: the pattern's parameters
		// are values of the field.
		sort, bounds = rc, []string{skT, skT}
	case g.b.keyType(skAttr) == mapping.TypeNumber:
		sort, bounds = rc, []string{skT}
	case rc == "begins_with", rc == ">", rc == ">=":
		sort, bounds = rc, []string{templatePrefix(skT)}
	case rc == "<", rc == "<=":
		sort, bounds = rc, []string{skT}
	case rc == "between":
		sort, bounds = rc, []string{templatePrefix(skT), skT}
	}
	return g.render(e, pkAttr, skAttr, pkT, sort, bounds)
}

// render writes the key condition, each template translated with e's
// placeholders; a duplicated field in it must also be a column of some
// entity's table, where verify samples the parameter from.
func (g *binder) render(e *BoundEntity, pkAttr, skAttr, pkT, sort string, bounds []string) (string, string) {
	var missing []string
	tr := func(tpl string) string {
		out, miss, _ := translateTemplate(tpl, func(f string) (keyColumn, bool) {
			c, ok := e.keyName[f]
			if ok && e.dup[f] && !g.anyColumn(f) {
				return c, false
			}
			return c, ok
		})
		missing = append(missing, miss...)
		return out
	}
	pkTr := g.b.typedTemplate(pkAttr, tr(pkT))
	skTr := func(tpl string) string { return g.b.typedTemplate(skAttr, tr(tpl)) }
	cond := fmt.Sprintf("%s = %s", pkAttr, pkTr)
	switch {
	case sort == "":
	case sort == "begins_with":
		cond += fmt.Sprintf(" AND begins_with(%s, %s)", skAttr, skTr(bounds[0]))
	case sort == "between":
		cond += fmt.Sprintf(" AND %s BETWEEN %s AND %s", skAttr, skTr(bounds[0]), skTr(bounds[1]))
	default:
		cond += fmt.Sprintf(" AND %s %s %s", skAttr, sort, skTr(bounds[0]))
	}
	if len(missing) > 0 {
		return "", fmt.Sprintf("its key holds %s, which is no column of a bound entity's table: verify could not take a value for it from a row",
			strings.Join(missing, ", "))
	}
	return cond, ""
}

// anyColumn reports whether a bound entity's table has column c.
func (g *binder) anyColumn(c string) bool {
	for _, e := range g.b.Entities {
		if e.Table != nil {
			if _, ok := e.Table.Column(c); ok {
				return true
			}
		}
	}
	return false
}

// crossPatterns reports the design's cross-table patterns over this
// table: a TransactGet reads another table's items, which a mapping of
// one table neither holds nor verifies, so it is unbound, by name; a
// TransactWrite is a write, not translated as the other writes are.
func (g *binder) crossPatterns() {
	own := g.b.Design.Config.TableName
	for _, c := range g.b.Design.CrossPatterns {
		others := slices.DeleteFunc(slices.Clone(c.Tables), func(t string) bool { return t == own })
		if len(others) == 0 {
			continue // a transaction over this table alone
		}
		what := fmt.Sprintf("a cross-table %s (pattern %d) over tables %s", c.Operation, c.ID, strings.Join(c.Tables, ", "))
		if c.Operation == "TransactGet" {
			g.unbound("access pattern "+c.Name, "%s reads %s, another table of the design: a mapping is one table, so verify cannot run it; bind each table with its own init --from-design --design-table, and read them apart",
				what, strings.Join(others, ", "))
			continue
		}
		g.b.Untranslated = append(g.b.Untranslated, fmt.Sprintf("%s: %s; the draft migrates and verifies reads", c.Name, what))
	}
}
