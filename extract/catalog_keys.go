package extract

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"
)

// UniqueKey is a valid primary key or unique index (pg_index.indisunique),
// neither partial nor on an expression: no two rows share all of Columns
// (NULLs aside). A table with inheritance children has none: its indexes do
// not cover their rows, which a query of it reads.
// https://www.postgresql.org/docs/current/catalog-pg-index.html
type UniqueKey struct {
	// Columns are the key columns in index order, without INCLUDE columns.
	Columns []string
	// Primary is true for the primary key.
	Primary bool
	// Name is the index's name (a constraint's, for a constraint's index).
	Name string
	// Constraint is true for the index of a PRIMARY KEY or UNIQUE constraint.
	Constraint bool
}

// UniqueKeys returns the unique keys of table ident, as Table.Keys lists them.
func (c Catalog) UniqueKeys(ctx context.Context, ident pgx.Identifier) ([]UniqueKey, error) {
	var oid uint32
	if err := c.q.QueryRow(ctx, "SELECT $1::text::regclass::oid", ident.Sanitize()).Scan(&oid); err != nil {
		return nil, err
	}
	keys, err := c.uniqueKeys(ctx, []uint32{oid})
	return keys[oid], err
}

func (c Catalog) uniqueKeys(ctx context.Context, oids []uint32) (map[uint32][]UniqueKey, error) {
	rows, err := c.q.Query(ctx, `
SELECT i.indrelid, ic.relname::text, i.indisprimary,
       EXISTS (SELECT FROM pg_catalog.pg_constraint k WHERE k.conindid = i.indexrelid AND k.conrelid = i.indrelid AND k.contype IN ('p', 'u')),
       ARRAY(SELECT a.attname::text FROM unnest(i.indkey) WITH ORDINALITY AS u(attnum, n)
             JOIN pg_catalog.pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = u.attnum
             WHERE u.n <= i.indnkeyatts ORDER BY u.n)
FROM pg_catalog.pg_index i
JOIN pg_catalog.pg_class ic ON ic.oid = i.indexrelid
JOIN pg_catalog.pg_class t ON t.oid = i.indrelid
WHERE i.indrelid = ANY($1) AND i.indisunique AND i.indisvalid AND i.indpred IS NULL AND i.indexprs IS NULL
  AND (t.relkind = 'p' OR NOT EXISTS (SELECT FROM pg_catalog.pg_inherits h WHERE h.inhparent = t.oid))
ORDER BY i.indrelid, i.indisprimary DESC, ic.relname COLLATE "C"`, oids)
	if err != nil {
		return nil, err
	}
	out := map[uint32][]UniqueKey{}
	var rel uint32
	var k UniqueKey
	_, err = pgx.ForEachRow(rows, []any{&rel, &k.Name, &k.Primary, &k.Constraint, &k.Columns}, func() error {
		k.Columns = slices.Clone(k.Columns)
		out[rel] = append(out[rel], k)
		return nil
	})
	return out, err
}

// ForeignKey is one foreign key of a child table (pg_constraint, contype 'f').
// A partitioned table's include those only its partitions declare, lifted
// once per signature with DeclaredOn and Partial set.
// https://www.postgresql.org/docs/current/catalog-pg-constraint.html
type ForeignKey struct {
	Name string
	// Columns are the child's columns; RefColumns those they reference, pairwise.
	Columns             []string
	RefSchema, RefTable string
	RefColumns          []string
	// DeclaredOn lists the partitions declaring a lifted key, else nil.
	DeclaredOn []pgx.Identifier
	// Partial is true when DeclaredOn misses a leaf partition.
	Partial bool
}

// signature identifies a foreign key by what it constrains, not its name.
func (fk *ForeignKey) signature() string {
	return strings.Join(fk.Columns, "\x00") + "\x01" + fk.RefSchema + "\x00" + fk.RefTable + "\x01" + strings.Join(fk.RefColumns, "\x00")
}

// foreignKeys sets ForeignKeys of the tables byOID: their own and lifted ones.
func (c Catalog) foreignKeys(ctx context.Context, byOID map[uint32]*Table, oids []uint32) error {
	rows, err := c.q.Query(ctx, `
SELECT k.conrelid, k.conname::text,
       ARRAY(SELECT a.attname::text FROM unnest(k.conkey) WITH ORDINALITY u(n, i)
             JOIN pg_catalog.pg_attribute a ON a.attrelid = k.conrelid AND a.attnum = u.n ORDER BY u.i),
       fn.nspname::text, fc.relname::text,
       ARRAY(SELECT a.attname::text FROM unnest(k.confkey) WITH ORDINALITY u(n, i)
             JOIN pg_catalog.pg_attribute a ON a.attrelid = k.confrelid AND a.attnum = u.n ORDER BY u.i),
       n.nspname::text, c.relname::text,
       CASE WHEN c.relispartition THEN pg_catalog.pg_partition_root(c.oid)::oid ELSE 0 END,
       ARRAY(SELECT relid::oid FROM pg_catalog.pg_partition_tree(c.oid) WHERE isleaf AND c.relispartition)
FROM pg_catalog.pg_constraint k
JOIN pg_catalog.pg_class c ON c.oid = k.conrelid
JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
JOIN pg_catalog.pg_class fc ON fc.oid = k.confrelid
JOIN pg_catalog.pg_namespace fn ON fn.oid = fc.relnamespace
WHERE k.contype = 'f' AND k.conparentid = 0
  AND (k.conrelid = ANY($1) OR (c.relispartition AND pg_catalog.pg_partition_root(c.oid)::oid = ANY($1)))
ORDER BY k.conname COLLATE "C", n.nspname COLLATE "C", c.relname COLLATE "C"`, oids)
	if err != nil {
		return err
	}
	var rel, root uint32
	var fk ForeignKey
	var schema, name string
	var leaves []uint32
	var partitions []partitionKey
	_, err = pgx.ForEachRow(rows, []any{&rel, &fk.Name, &fk.Columns, &fk.RefSchema, &fk.RefTable, &fk.RefColumns, &schema, &name, &root, &leaves}, func() error {
		fk.Columns, fk.RefColumns = slices.Clone(fk.Columns), slices.Clone(fk.RefColumns)
		if t := byOID[rel]; t != nil {
			t.ForeignKeys = append(t.ForeignKeys, fk)
		}
		if t := byOID[root]; t != nil && root != rel {
			partitions = append(partitions, partitionKey{root: t, fk: fk, on: pgx.Identifier{schema, name}, leaves: slices.Clone(leaves)})
		}
		return nil
	})
	if err != nil {
		return err
	}
	liftForeignKeys(partitions)
	return nil
}

// partitionKey is a foreign key declared on a partition of root.
type partitionKey struct {
	root   *Table
	fk     ForeignKey
	on     pgx.Identifier
	leaves []uint32
}

// liftForeignKeys lifts partitions' foreign keys to their root, one each.
func liftForeignKeys(partitions []partitionKey) {
	type lift struct {
		root    *Table
		fk      ForeignKey
		covered map[uint32]bool
	}
	var lifts []*lift
	bySig := map[string]*lift{}
	for _, p := range partitions {
		sig := p.fk.signature()
		if slices.ContainsFunc(p.root.ForeignKeys, func(own ForeignKey) bool { return own.signature() == sig }) {
			continue
		}
		key := fmt.Sprint(p.root.OID, "\x02", sig)
		l := bySig[key]
		if l == nil {
			l = &lift{root: p.root, fk: p.fk, covered: map[uint32]bool{}}
			bySig[key] = l
			lifts = append(lifts, l)
		}
		l.fk.DeclaredOn = append(l.fk.DeclaredOn, p.on)
		for _, leaf := range p.leaves {
			l.covered[leaf] = true
		}
	}
	for _, l := range lifts {
		l.fk.Partial = slices.ContainsFunc(l.root.leaves, func(leaf uint32) bool { return !l.covered[leaf] })
		l.root.ForeignKeys = append(l.root.ForeignKeys, l.fk)
	}
	for _, l := range lifts {
		slices.SortStableFunc(l.root.ForeignKeys, func(a, b ForeignKey) int { return strings.Compare(a.Name, b.Name) })
	}
}

// ReplicaIdentity is what the old row of a table's changes carries.
// https://www.postgresql.org/docs/current/sql-altertable.html#SQL-ALTERTABLE-REPLICA-IDENTITY
type ReplicaIdentity struct {
	// Kind is relreplident: 'd' DEFAULT, 'n' NOTHING, 'f' FULL, 'i' USING INDEX.
	Kind byte `json:"kind"`
	// Columns are the columns carried, in attnum order: all for FULL, none for
	// NOTHING or for DEFAULT without a primary key.
	Columns []string `json:"columns,omitempty"`
	// Partitions are a partitioned table's leaf partitions' own, by regclass
	// text: pgoutput builds a partition's old rows from them.
	Partitions map[string]ReplicaIdentity `json:"partitions,omitempty"`
}

// ReplicaIdentities returns each existing relation's replica identity by OID.
func (c Catalog) ReplicaIdentities(ctx context.Context, oids []uint32) (map[uint32]ReplicaIdentity, error) {
	rows, err := c.q.Query(ctx, `
SELECT r.oid, CASE WHEN c.oid = r.oid THEN '' ELSE c.oid::regclass::text END, c.relreplident::text,
       ARRAY(SELECT a.attname::text FROM pg_catalog.pg_attribute a
             WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
               AND (c.relreplident = 'f' OR EXISTS (SELECT FROM pg_catalog.pg_index i WHERE i.indrelid = c.oid
                     AND ((c.relreplident = 'd' AND i.indisprimary) OR (c.relreplident = 'i' AND i.indisreplident))
                     AND a.attnum = ANY(i.indkey)))
             ORDER BY a.attnum)
FROM pg_catalog.pg_class r
JOIN pg_catalog.pg_class c ON c.oid = r.oid
  OR (r.relkind = 'p' AND c.oid IN (SELECT t.relid FROM pg_catalog.pg_partition_tree(r.oid) t WHERE t.isleaf))
WHERE r.oid = ANY($1)
ORDER BY c.oid = r.oid DESC`, oids)
	if err != nil {
		return nil, fmt.Errorf("replica identities: %w", err)
	}
	out := map[uint32]ReplicaIdentity{}
	var oid uint32
	var leaf, kind string
	var cols []string
	_, err = pgx.ForEachRow(rows, []any{&oid, &leaf, &kind, &cols}, func() error {
		ri := ReplicaIdentity{Kind: kind[0]}
		if len(cols) > 0 {
			ri.Columns = slices.Clone(cols)
		}
		if leaf == "" {
			out[oid] = ri
			return nil
		}
		root := out[oid]
		if root.Partitions == nil {
			root.Partitions = map[string]ReplicaIdentity{}
		}
		root.Partitions[leaf] = ri
		out[oid] = root
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("replica identities: %w", err)
	}
	return out, nil
}
