package extract

import (
	"context"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"
)

// GeneratedColumn is a generated column (pg_attribute, pg_attrdef, pg_depend).
// https://www.postgresql.org/docs/current/ddl-generated-columns.html
type GeneratedColumn struct {
	Name string
	// Kind is attgenerated: 's' STORED, 'v' VIRTUAL (PostgreSQL 18 on).
	Kind byte
	// Expression is the generation expression from pg_get_expr: "lower(title)".
	Expression string
	// Reads are the table's columns the expression reads, in attnum order.
	Reads []string
}

// KindName is "STORED" or "VIRTUAL", as CREATE TABLE spells the kind.
func (g GeneratedColumn) KindName() string {
	if g.Kind == 'v' {
		return "VIRTUAL"
	}
	return "STORED"
}

// GeneratedColumns returns the relations' generated columns by OID in attnum
// order; Reads come from pg_depend (on the default or column: servers differ).
func (c Catalog) GeneratedColumns(ctx context.Context, oids []uint32) (map[uint32][]GeneratedColumn, error) {
	rows, err := c.q.Query(ctx, `
SELECT a.attrelid, a.attname::text, a.attgenerated::text, coalesce(pg_catalog.pg_get_expr(d.adbin, d.adrelid), ''),
       ARRAY(SELECT s.attname::text FROM pg_catalog.pg_attribute s
             WHERE s.attrelid = a.attrelid AND s.attnum > 0 AND s.attnum <> a.attnum AND NOT s.attisdropped
               AND EXISTS (SELECT FROM pg_catalog.pg_depend dep
                           WHERE dep.refclassid = 'pg_catalog.pg_class'::pg_catalog.regclass AND dep.refobjid = a.attrelid
                             AND dep.refobjsubid = s.attnum
                             AND ((dep.classid = 'pg_catalog.pg_attrdef'::pg_catalog.regclass AND dep.objid = d.oid)
                               OR (dep.classid = 'pg_catalog.pg_class'::pg_catalog.regclass AND dep.objid = a.attrelid AND dep.objsubid = a.attnum)))
             ORDER BY s.attnum)
FROM pg_catalog.pg_attribute a
LEFT JOIN pg_catalog.pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
WHERE a.attrelid = ANY($1) AND a.attnum > 0 AND NOT a.attisdropped AND a.attgenerated <> ''
ORDER BY a.attrelid, a.attnum`, oids)
	if err != nil {
		return nil, fmt.Errorf("generated columns: %w", err)
	}
	out := map[uint32][]GeneratedColumn{}
	var rel uint32
	var g GeneratedColumn
	var kind string
	_, err = pgx.ForEachRow(rows, []any{&rel, &g.Name, &kind, &g.Expression, &g.Reads}, func() error {
		col := g
		col.Kind, col.Reads = kind[0], slices.Clone(g.Reads)
		out[rel] = append(out[rel], col)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("generated columns: %w", err)
	}
	return out, nil
}
