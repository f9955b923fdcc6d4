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

// Generated columns and the follow: pgoutput leaves them out of every row it
// sends. Items derive from the present state, so a generated column they read
// is right, but an identity column (Graph.identity) must not be generated, or
// the follow finds nothing from a change's rows. See docs/follow.md.

// identityUse is one reason a followed table's old row image must carry a
// column: the mapping path naming it and what the follow does with it.
type identityUse struct {
	col, path string
	// what, why and instead are phrases of the message.
	what, why, instead string
}

// identityUses lists where the mapping uses each column of t.identity and
// why a change's rows must carry it, in effect order.
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

// CheckGenerated refuses generated identity columns of the followed tables: a
// change's rows never carry them. The error is a mapping.Errors, one per use,
// at the mapping path naming the column, with its generation expression.
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

// parenthesized is expr in parentheses as CREATE TABLE writes it:
// pg_get_expr parenthesizes an operator expression but not a function call.
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
