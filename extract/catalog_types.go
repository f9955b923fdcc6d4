package extract

import (
	"context"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// typeInfo is a type's name and, for an array, its element's and delimiter.
type typeInfo struct {
	name, elem string
	delim      string
}

func (t typeInfo) column() Column {
	c := Column{Type: t.name}
	if t.elem != "" {
		c.Array, c.Type = true, t.elem
		if len(t.delim) == 1 {
			c.Delim = t.delim[0]
		}
	}
	c.AsText = !nativeTypes[c.Type]
	return c
}

// types returns by OID each field's type's typeInfo (pg_type).
// https://www.postgresql.org/docs/current/catalog-pg-type.html
func (c Catalog) types(ctx context.Context, fields []pgconn.FieldDescription) (map[uint32]typeInfo, error) {
	oids := make([]uint32, len(fields))
	for i, f := range fields {
		oids[i] = f.DataTypeOID
	}
	// An array's element is read as its domains' base type: PostgreSQL
	// reports a domain column's base type, but an array of a domain keeps it.
	rows, err := c.q.Query(ctx, `
SELECT t.oid, t.typname, coalesce(b.typname, ''), coalesce(b.typdelim::text, '')
FROM pg_catalog.pg_type t
LEFT JOIN LATERAL (
	WITH RECURSIVE d AS (
		SELECT e.oid, e.typname, e.typdelim, e.typtype, e.typbasetype FROM pg_catalog.pg_type e
		WHERE e.oid = t.typelem AND t.typcategory = 'A'
		UNION ALL
		SELECT p.oid, p.typname, p.typdelim, p.typtype, p.typbasetype FROM d JOIN pg_catalog.pg_type p ON p.oid = d.typbasetype
		WHERE d.typtype = 'd')
	SELECT d.typname, d.typdelim FROM d WHERE d.typtype <> 'd') b ON true
WHERE t.oid = ANY($1)`, oids)
	if err != nil {
		return nil, err
	}
	out := map[uint32]typeInfo{}
	var oid uint32
	var ti typeInfo
	_, err = pgx.ForEachRow(rows, []any{&oid, &ti.name, &ti.elem, &ti.delim}, func() error {
		out[oid] = ti
		return nil
	})
	return out, err
}

// arrayDims returns each array field's declared dimensions (attndims) when it
// comes from a table column, else 0; it queries only when needed.
func (c Catalog) arrayDims(ctx context.Context, fields []pgconn.FieldDescription, types map[uint32]typeInfo) ([]int, error) {
	dims := make([]int, len(fields))
	var rels []uint32
	var nums []int16
	for _, f := range fields {
		if types[f.DataTypeOID].elem != "" && f.TableOID != 0 {
			rels, nums = append(rels, f.TableOID), append(nums, int16(f.TableAttributeNumber))
		}
	}
	if len(rels) == 0 {
		return dims, nil
	}
	rows, err := c.q.Query(ctx, `
SELECT a.attrelid, a.attnum, a.attndims
FROM unnest($1::oid[], $2::int2[]) AS f(rel, num)
JOIN pg_catalog.pg_attribute a ON a.attrelid = f.rel AND a.attnum = f.num`, rels, nums)
	if err != nil {
		return nil, err
	}
	var rel uint32
	var num int16
	var n int32
	_, err = pgx.ForEachRow(rows, []any{&rel, &num, &n}, func() error {
		for i, f := range fields {
			if f.TableOID == rel && int16(f.TableAttributeNumber) == num {
				dims[i] = int(n)
			}
		}
		return nil
	})
	return dims, err
}

// sortType returns format_type of oid with typmod, and whether it collates.
func (c Catalog) sortType(ctx context.Context, oid uint32, typmod int32) (name string, collatable bool, err error) {
	err = c.q.QueryRow(ctx, `SELECT format_type(t.oid, $2), t.typcollation <> 0 FROM pg_catalog.pg_type t WHERE t.oid = $1`,
		oid, typmod).Scan(&name, &collatable)
	return name, collatable, err
}
