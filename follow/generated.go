package follow

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/pg2dynamo/pg2dynamo/extract"
	"github.com/pg2dynamo/pg2dynamo/mapping"
)

// Generated columns and the follow. pgoutput leaves generated columns out
// of every row it sends, whatever the replica identity (the follow does
// not use PostgreSQL 18's publish_generated_columns). Items are derived
// from the source's present state, so a generated column the items only
// read is always right; but none of the graph's identity columns
// (Graph.identity: the primary key, the table key columns, the join
// columns) may be generated, or the follow would find nothing from a
// change's rows and leave stale items. docs/follow.md gives the rules.

// identityUse is one reason a followed table's old row image must carry a
// column: the mapping's path that names it and what the follow does with
// it.
type identityUse struct {
	col, path string
	// what the column is to the mapping, why the follow needs it from a
	// change's row, and what to do instead: phrases of the message.
	what, why, instead string
}

// identityUses lists, for each column of t.identity, where the mapping
// uses it and why a change's rows must carry it, in effect order.
func (g *Graph) identityUses(t *table) []identityUse {
	var uses []identityUse
	for _, e := range t.effects {
		ent := g.plans[e.entity].Entity()
		switch e.kind {
		case own:
			for _, pair := range e.on {
				uses = append(uses, identityUse{col: pair[0], path: e.path,
					what:    "is in the primary key of " + qualified(t.schema, t.name),
					why:     "find the row of " + ent.Name + " a change is of",
					instead: "give the table a primary key of columns that are not generated"})
			}
			for _, k := range tableKeyTemplates(ent) {
				for _, col := range k.t.Columns() {
					if slices.Contains(g.keyCols[e.entity], col) {
						uses = append(uses, identityUse{col: col, path: k.path,
							what:    "renders a table key of " + ent.Name,
							why:     "delete the items of " + ent.Name + " whose keys changed or whose rows are gone",
							instead: "build the key from columns that are not generated"})
					}
				}
			}
		case child, parent:
			// e.path is the rule's source; its join is beside it.
			join := mapping.Path(strings.TrimSuffix(e.path, "."+mapping.KeySource), mapping.KeyJoin)
			why := "find the " + ent.Name + " rows that embed or count a changed row"
			if e.kind == parent {
				why = "find the " + ent.Name + " rows that duplicate a changed row"
			}
			for _, pair := range e.on {
				uses = append(uses, identityUse{col: pair[0], path: join,
					what: "joins " + qualified(t.schema, t.name) + " to " + ent.Name, why: why,
					instead: "join on columns that are not generated"})
			}
		}
	}
	return uses
}

// keyTemplate is a table key template of an entity and its mapping path.
type keyTemplate struct {
	path string
	t    mapping.Template
}

// tableKeyTemplates are e's table key templates: pk, sk and the mirror's.
func tableKeyTemplates(e *mapping.Entity) []keyTemplate {
	ep := mapping.Path(mapping.KeyEntities, e.Name)
	out := []keyTemplate{{mapping.Path(ep, mapping.KeyPK), e.PKTemplate}, {mapping.Path(ep, mapping.KeySK), e.SKTemplate}}
	if e.Mirror != nil {
		out = append(out, keyTemplate{mapping.Path(ep, mapping.KeyMirror, mapping.KeyPK), e.Mirror.PKTemplate},
			keyTemplate{mapping.Path(ep, mapping.KeyMirror, mapping.KeySK), e.Mirror.SKTemplate})
	}
	return out
}

// CheckGenerated refuses generated columns among the followed tables'
// identity columns (see identityUses): the old and new rows of a change
// never carry them, so the follow could neither find the rows a change
// affects nor delete the items of a row gone or re-keyed. A generated
// column the items only read is allowed. The error is a mapping.Errors,
// one *mapping.Error per use, located at the mapping's path that names
// the column (a key template, a join, the entity's source for its
// primary key), naming the table, the column, its generation expression
// and the columns that expression reads; other errors are the catalog's.
func (g *Graph) CheckGenerated(ctx context.Context, conn *pgx.Conn, m *mapping.Mapping) error {
	gens, err := extract.NewCatalog(conn).GeneratedColumns(ctx, slices.Collect(maps.Keys(g.byOID)))
	if err != nil {
		return err
	}
	var errs mapping.Errors
	for _, key := range slices.Sorted(maps.Keys(g.tables)) {
		t := g.tables[key]
		generated := gens[t.rel.OID]
		if len(generated) == 0 {
			continue
		}
		for _, u := range g.identityUses(t) {
			i := slices.IndexFunc(generated, func(c extract.GeneratedColumn) bool { return c.Name == u.col })
			if i < 0 {
				continue
			}
			c := generated[i]
			reads := ""
			if len(c.Reads) > 0 {
				reads = fmt.Sprintf(" (the expression reads %s)", strings.Join(c.Reads, ", "))
			}
			errs = append(errs, m.Errorf(u.path, "--follow: column %s of %s %s, and it is generated (GENERATED ALWAYS AS %s %s): logical replication sends no generated column in a change's rows (pgoutput leaves them out; pg2dynamo does not ask PostgreSQL 18 for them), so the follow could not %s, and would leave stale items; %s%s, or migrate without --follow",
				quote(c.Name), qualified(t.schema, t.name), u.what, parenthesized(c.Expression), c.KindName(), u.why, u.instead, reads))
		}
	}
	if len(errs) > 0 {
		return errs
	}
	return nil
}

// parenthesized is expr in parentheses, as CREATE TABLE writes a
// generation expression: pg_get_expr prints an operator's expression in
// them already ("(a || b)"), a function call without ("lower(title)").
func parenthesized(expr string) string {
	if strings.HasPrefix(expr, "(") {
		depth, quoted := 0, false
		for i, r := range expr {
			switch {
			case r == '\'':
				quoted = !quoted
			case quoted:
			case r == '(':
				depth++
			case r == ')':
				depth--
				if depth == 0 {
					if i == len(expr)-1 {
						return expr
					}
					return "(" + expr + ")"
				}
			}
		}
	}
	return "(" + expr + ")"
}
