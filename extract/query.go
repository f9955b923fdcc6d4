package extract

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/pg2dynamo/pg2dynamo/mapping"
)

// Query is what Stream reads for one entity: its source's columns, then each
// Join's values, joined in PostgreSQL (a row holds one collection at most).
type Query struct {
	Source  mapping.Source
	Columns []Column
	Joins   []Join
	// OrderBy, when set, orders rows by these columns (the primary key); each
	// row then ends with its Position.
	OrderBy []Column
	// After, when set (a position), reads only the rows after it.
	After []string
	// Until, when set (a position), reads only the rows up to and including it.
	Until []string
	// Match, when set, reads only the rows a change touches (package follow).
	Match *Match
}

// Match restricts a Query to rows whose Columns equal a tuple of Values (texts
// through the input function; nil is NULL and matches nothing).
type Match struct {
	Columns []Column
	Values  [][]*string
}

// Position returns a row's position: its last len(q.OrderBy) values as output
// text, which After and Until bind back exactly; nil when q is unordered.
func (q Query) Position(row []any) []string {
	if len(q.OrderBy) == 0 || len(row) < len(q.OrderBy) {
		return nil
	}
	out := make([]string, len(q.OrderBy))
	for i, v := range row[len(row)-len(q.OrderBy):] {
		out[i], _ = v.(string)
	}
	return out
}

// Args are the statement's parameters: the After values, then the Until values.
func (q Query) Args() []any {
	args := make([]any, 0, len(q.After)+len(q.Until))
	for _, v := range q.After {
		args = append(args, v)
	}
	for _, v := range q.Until {
		args = append(args, v)
	}
	if q.Match != nil {
		for i := range q.Match.Columns {
			col := make([]*string, len(q.Match.Values))
			for r, t := range q.Match.Values {
				col[r] = t[i]
			}
			args = append(args, col)
		}
	}
	return args
}

// JoinKind says what a Join adds to each row.
type JoinKind int

const (
	// JoinParent adds the columns of the one parent row (Columns values).
	JoinParent JoinKind = iota
	// JoinEmbed adds the child rows as a record[] (NULL for none) and their count.
	JoinEmbed
	// JoinAggregate adds Function over the child rows (none: count 0, else NULL).
	JoinAggregate
)

// Join is a parent or child source joined to each row on equal columns.
type Join struct {
	Kind   JoinKind
	Source mapping.Source
	// On pairs (other source's column, this row's column).
	On [][2]string
	// Columns read from the other source (JoinParent, JoinEmbed).
	Columns []Column
	// OrderBy orders an embed's records.
	OrderBy []mapping.Order
	// Limit, when above 0, caps an embed's records; the count counts all.
	Limit int
	// Function and Column of a JoinAggregate.
	Function, Column string
}

// Width is the number of values the join adds to a row.
func (j Join) Width() int {
	switch j.Kind {
	case JoinParent:
		return len(j.Columns)
	case JoinEmbed:
		return 2
	}
	return 1
}

// SQL renders the statement, identifiers quoted, text columns in their output
// form. A row holds q.Columns' values, each join's, then its Position.
func (q Query) SQL() string {
	var sel []string
	for _, c := range q.Columns {
		sel = append(sel, colExpr("src", c))
	}
	var joins []string
	for i, j := range q.Joins {
		alias := fmt.Sprintf("j%d", i)
		switch j.Kind {
		case JoinParent:
			for _, c := range j.Columns {
				sel = append(sel, colExpr(alias, c))
			}
			joins = append(joins, fmt.Sprintf("LEFT JOIN %s AS %s ON %s", fromItem(j.Source), alias, onClause(alias, j.On, false)))
		case JoinEmbed, JoinAggregate:
			var keys, agg []string
			for k, p := range j.On {
				keys = append(keys, fmt.Sprintf("c.%s AS k%d", ident(p[0]), k))
			}
			if j.Kind == JoinEmbed {
				fields := make([]string, len(j.Columns))
				for f, c := range j.Columns {
					fields[f] = recordField(c)
				}
				// Each array's dimensions follow (embedArrays).
				for _, c := range j.Columns {
					if c.Array && !c.AsText {
						fields = append(fields, "array_dims(c."+ident(c.Name)+")")
					}
				}
				var order []string
				for _, o := range j.OrderBy {
					dir := ""
					if o.Desc {
						dir = " DESC"
					}
					order = append(order, "c."+ident(o.Column)+dir)
				}
				orderBy := ""
				if len(order) > 0 {
					orderBy = " ORDER BY " + strings.Join(order, ", ")
				}
				items := fmt.Sprintf("array_agg(ROW(%s)%s)", strings.Join(fields, ", "), orderBy)
				if j.Limit > 0 {
					// Only Limit records cross the wire; n still counts all.
					items = fmt.Sprintf("(%s)[1:%d]", items, j.Limit)
				}
				agg = append(agg, items+" AS items", "count(*) AS n")
				sel = append(sel, alias+".items", alias+".n")
			} else {
				arg := "*"
				if j.Function != mapping.AggCount {
					arg = "c." + ident(j.Column)
				}
				agg = append(agg, fmt.Sprintf("%s(%s) AS v", j.Function, arg))
				if j.Function == mapping.AggCount {
					sel = append(sel, "coalesce("+alias+".v, 0)")
				} else {
					sel = append(sel, alias+".v")
				}
			}
			groups := make([]string, len(j.On))
			for k := range j.On {
				groups[k] = fmt.Sprint(k + 1)
			}
			sub := fmt.Sprintf("(SELECT %s, %s FROM %s AS c GROUP BY %s)",
				strings.Join(keys, ", "), strings.Join(agg, ", "), fromItem(j.Source), strings.Join(groups, ", "))
			joins = append(joins, fmt.Sprintf("LEFT JOIN %s AS %s ON %s", sub, alias, onClause(alias, j.On, true)))
		}
	}
	for _, c := range q.OrderBy {
		sel = append(sel, outputText("src."+ident(c.Name)))
	}
	if len(sel) == 0 {
		sel = []string{"1"}
	}
	sql := "SELECT " + strings.Join(sel, ", ") + "\nFROM " + from(q.Source)
	for _, j := range joins {
		sql += "\n" + j
	}
	return sql + q.orderClause()
}

// orderClause renders the WHERE and the ORDER BY; positions compare as row
// values, so a composite key orders as its index does.
func (q Query) orderClause() string {
	sql := q.whereClause()
	if len(q.OrderBy) == 0 {
		return sql
	}
	cols := make([]string, len(q.OrderBy))
	for i, c := range q.OrderBy {
		cols[i] = "src." + ident(c.Name)
	}
	return sql + "\nORDER BY " + strings.Join(cols, ", ")
}

func (q Query) whereClause() string {
	var match string
	base := len(q.After) + len(q.Until) // Match's parameters follow theirs (Args)
	if q.Match != nil && len(q.Match.Columns) > 0 {
		cols := make([]string, len(q.Match.Columns))
		arrays := make([]string, len(q.Match.Columns))
		for i, c := range q.Match.Columns {
			cols[i] = "src." + ident(c.Name)
			arrays[i] = fmt.Sprintf("$%d::text[]::%s[]", base+i+1, typeExpr(c))
		}
		match = fmt.Sprintf("(%s) IN (SELECT * FROM unnest(%s))", strings.Join(cols, ", "), strings.Join(arrays, ", "))
	}
	if len(q.OrderBy) == 0 {
		if match != "" {
			return "\nWHERE " + match
		}
		return ""
	}
	cols := make([]string, len(q.OrderBy))
	for i, c := range q.OrderBy {
		cols[i] = "src." + ident(c.Name)
	}
	n := 0
	params := func() string {
		ps := make([]string, len(q.OrderBy))
		for i, c := range q.OrderBy {
			n++
			ps[i] = fmt.Sprintf("$%d::text::%s", n, typeExpr(c))
		}
		return strings.Join(ps, ", ")
	}
	var where []string
	if len(q.After) == len(q.OrderBy) {
		where = append(where, fmt.Sprintf("(%s) > (%s)", strings.Join(cols, ", "), params()))
	}
	if len(q.Until) == len(q.OrderBy) {
		where = append(where, fmt.Sprintf("(%s) <= (%s)", strings.Join(cols, ", "), params()))
	}
	if match != "" {
		where = append(where, match)
	}
	if len(where) == 0 {
		return ""
	}
	return "\nWHERE " + strings.Join(where, " AND ")
}

func ident(name string) string { return pgx.Identifier{name}.Sanitize() }

func typeExpr(c Column) string {
	if c.Array {
		return ident(c.Type) + "[]"
	}
	return ident(c.Type)
}

// colExpr selects column c of alias: in its text form when read as text; an
// array cast to its element's type, which an array of a domain is not.
func colExpr(alias string, c Column) string {
	e := alias + "." + ident(c.Name)
	switch {
	case c.AsText:
		return textForm(e, c)
	case c.Array:
		return e + "::" + typeExpr(c)
	}
	return e
}

// textForm renders expression e of column c in its output function's text
// (format's %s: a text cast differs, e.g. inet's netmask), NULL kept apart.
// Arrays keep their dimensions: text[] when comma-delimited, else cast per
// element.
func textForm(e string, c Column) string {
	switch {
	case !c.Array:
		return outputText(e)
	case c.Delim == 0 || c.Delim == ',':
		return outputText(e) + "::text[]"
	}
	return e + "::text[]"
}

// outputText renders e as its output function's text, NULL for NULL.
func outputText(e string) string {
	return "(CASE WHEN " + e + " IS DISTINCT FROM NULL THEN format('%s', " + e + ") END)"
}

// recordField is a column inside an embed's ROW(…), cast to its type name: in
// a record PostgreSQL reports a domain's own type, which pgx cannot decode.
func recordField(c Column) string {
	e := "c." + ident(c.Name)
	switch {
	case c.AsText:
		return textForm(e, c)
	case c.Array:
		return e + "::" + ident(c.Type) + "[]"
	}
	return e + "::" + ident(c.Type)
}

// onClause renders alias.other = src.own pairs (grouped keys as k0, k1, …).
func onClause(alias string, on [][2]string, grouped bool) string {
	parts := make([]string, len(on))
	for i, p := range on {
		other := alias + "." + ident(p[0])
		if grouped {
			other = fmt.Sprintf("%s.k%d", alias, i)
		}
		parts[i] = other + " = src." + ident(p[1])
	}
	return strings.Join(parts, " AND ")
}

func fromItem(src mapping.Source) string {
	return strings.TrimSuffix(from(src), " AS src")
}

// CheckQuery has PostgreSQL plan q without running it, so a join it cannot do
// is a *mapping.Error at the entity before anything is written.
func (s *Source) CheckQuery(ctx context.Context, m *mapping.Mapping, entity string, q Query) error {
	if _, err := s.conn.Prepare(ctx, "", q.SQL()); err != nil {
		var pe *pgconn.PgError
		if errors.As(err, &pe) {
			return m.Errorf(mapping.Path(mapping.KeyEntities, entity),
				"PostgreSQL cannot run the entity's joins: %s (SQLSTATE %s)", pe.Message, pe.Code)
		}
		return fmt.Errorf("check %s: %w", entity, err)
	}
	return nil
}
