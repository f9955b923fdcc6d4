package extract

import (
	"context"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"
)

// Querier is what a Catalog reads through: a *pgx.Conn, or a pgx.Tx.
type Querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// Catalog is pg2dynamo's one reader of PostgreSQL's system catalogs
// (internal/codecheck enforces it). Methods run on the Querier, in its open
// transaction, and wrap its errors; as concurrency-safe as the Querier.
// https://www.postgresql.org/docs/current/catalogs.html
type Catalog struct{ q Querier }

// NewCatalog returns the catalog reader of q.
func NewCatalog(q Querier) Catalog { return Catalog{q: q} }

// RelKind is a table's pg_class.relkind.
type RelKind byte

// The kinds of table Catalog.Tables reads.
const (
	// OrdinaryTable holds its rows (relkind 'r'), partitions included.
	OrdinaryTable RelKind = 'r'
	// PartitionedTable is a table whose partitions hold its rows (relkind 'p').
	PartitionedTable RelKind = 'p'
)

// Table is one ordinary or partitioned table, from pg_class, pg_namespace,
// pg_inherits, pg_attribute, pg_index and pg_constraint.
// https://www.postgresql.org/docs/current/catalog-pg-class.html
type Table struct {
	// OID is pg_class.oid, which a rename keeps.
	OID          uint32
	Schema, Name string
	Kind         RelKind
	// Parent is a partition's partitioned table {schema, name}; nil otherwise.
	Parent pgx.Identifier
	// Columns are the table's columns in attnum order, without dropped ones.
	Columns []TableColumn
	// Keys are the unique keys: the primary key first, then by index name.
	Keys []UniqueKey
	// ForeignKeys are the outgoing foreign keys by name (see ForeignKey).
	ForeignKeys []ForeignKey
	// ReplicaIdentity is what the old row of its changes carries.
	ReplicaIdentity ReplicaIdentity

	// leaves are the OIDs of a partitioned table's leaf partitions.
	leaves []uint32
}

// TableColumn is one column of a Table (pg_attribute).
// https://www.postgresql.org/docs/current/catalog-pg-attribute.html
type TableColumn struct {
	Name string
	// Type is format_type(atttypid, atttypmod): "character varying(40)".
	Type string
	// TypeOID is atttypid.
	TypeOID uint32
	// TypeMod is atttypmod (length, precision and scale), -1 without one.
	TypeMod int32
	// Collation is attcollation, 0 for a type without one.
	Collation uint32
	// NotNull is attnotnull: the column has a NOT NULL constraint.
	NotNull bool
	// Generated is attgenerated set: logical replication does not send it.
	Generated bool
}

// PrimaryKey returns t's primary key columns in key order, nil without one.
func (t *Table) PrimaryKey() []string {
	if len(t.Keys) > 0 && t.Keys[0].Primary {
		return t.Keys[0].Columns
	}
	return nil
}

// Tables returns the ordinary and partitioned tables of schemas, partitions
// included, fully described, in (schema, name) byte order.
func (c Catalog) Tables(ctx context.Context, schemas []string) ([]*Table, error) {
	tables, err := c.tables(ctx, "n.nspname = ANY($1)", schemas)
	if err != nil {
		return nil, fmt.Errorf("tables of schemas %v: %w", schemas, err)
	}
	if err := c.fill(ctx, tables); err != nil {
		return nil, fmt.Errorf("tables of schemas %v: %w", schemas, err)
	}
	return tables, nil
}

// Table returns the table ident names, as a statement resolves it, or an error.
func (c Catalog) Table(ctx context.Context, ident pgx.Identifier) (*Table, error) {
	tables, err := c.tables(ctx, "c.oid = to_regclass($1)", ident.Sanitize())
	if err == nil && len(tables) == 0 {
		return nil, fmt.Errorf("table %s does not exist", ident.Sanitize())
	}
	if err == nil {
		err = c.fill(ctx, tables)
	}
	if err != nil {
		return nil, fmt.Errorf("table %s: %w", ident.Sanitize(), err)
	}
	return tables[0], nil
}

// tables reads the tables matching where (on pg_class c, pg_namespace n).
func (c Catalog) tables(ctx context.Context, where string, arg any) ([]*Table, error) {
	rows, err := c.q.Query(ctx, `
SELECT c.oid, n.nspname, c.relname, c.relkind::text, coalesce(pn.nspname, ''), coalesce(pc.relname, ''),
       CASE WHEN c.relkind = 'p' THEN ARRAY(SELECT relid::oid FROM pg_catalog.pg_partition_tree(c.oid) WHERE isleaf) END
FROM pg_catalog.pg_class c
JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
LEFT JOIN pg_catalog.pg_inherits i ON c.relispartition AND i.inhrelid = c.oid
LEFT JOIN pg_catalog.pg_class pc ON pc.oid = i.inhparent
LEFT JOIN pg_catalog.pg_namespace pn ON pn.oid = pc.relnamespace
WHERE c.relkind IN ('r', 'p') AND `+where+`
ORDER BY n.nspname COLLATE "C", c.relname COLLATE "C"`, arg)
	if err != nil {
		return nil, err
	}
	var out []*Table
	var t Table
	var kind, parentSchema, parentName string
	_, err = pgx.ForEachRow(rows, []any{&t.OID, &t.Schema, &t.Name, &kind, &parentSchema, &parentName, &t.leaves}, func() error {
		nt := &Table{OID: t.OID, Schema: t.Schema, Name: t.Name, Kind: RelKind(kind[0]), leaves: slices.Clone(t.leaves)}
		if parentName != "" {
			nt.Parent = pgx.Identifier{parentSchema, parentName}
		}
		out = append(out, nt)
		return nil
	})
	return out, err
}

func (c Catalog) fill(ctx context.Context, tables []*Table) error {
	byOID := make(map[uint32]*Table, len(tables))
	oids := make([]uint32, len(tables))
	for i, t := range tables {
		byOID[t.OID], oids[i] = t, t.OID
	}
	cols, err := c.columns(ctx, oids)
	if err != nil {
		return fmt.Errorf("columns: %w", err)
	}
	keys, err := c.uniqueKeys(ctx, oids)
	if err != nil {
		return fmt.Errorf("unique keys: %w", err)
	}
	idents, err := c.ReplicaIdentities(ctx, oids)
	if err != nil {
		return err
	}
	for _, t := range tables {
		t.Columns, t.Keys, t.ReplicaIdentity = cols[t.OID], keys[t.OID], idents[t.OID]
	}
	if err := c.foreignKeys(ctx, byOID, oids); err != nil {
		return fmt.Errorf("foreign keys: %w", err)
	}
	return nil
}

// columns returns the relations' live columns by OID, in attnum order.
func (c Catalog) columns(ctx context.Context, oids []uint32) (map[uint32][]TableColumn, error) {
	rows, err := c.q.Query(ctx, `
SELECT a.attrelid, a.attname::text, format_type(a.atttypid, a.atttypmod), a.atttypid, a.atttypmod, a.attcollation, a.attnotnull, a.attgenerated <> ''
FROM pg_catalog.pg_attribute a
WHERE a.attrelid = ANY($1) AND a.attnum > 0 AND NOT a.attisdropped
ORDER BY a.attrelid, a.attnum`, oids)
	if err != nil {
		return nil, err
	}
	out := map[uint32][]TableColumn{}
	var rel uint32
	var col TableColumn
	_, err = pgx.ForEachRow(rows, []any{&rel, &col.Name, &col.Type, &col.TypeOID, &col.TypeMod, &col.Collation, &col.NotNull, &col.Generated}, func() error {
		out[rel] = append(out[rel], col)
		return nil
	})
	return out, err
}

// Relation is a table as logical replication describes it: OID, name and
// columns in attnum order without dropped and generated ones.
type Relation struct {
	OID          uint32
	Schema, Name string
	Columns      []RelationColumn
	// Partitioned is true for relkind 'p'.
	Partitioned bool
}

// RelationColumn is one column of a Relation, as pgoutput gives it.
type RelationColumn struct {
	Name      string
	Type      uint32
	Mod       int32
	Collation uint32
}

// Relation returns the relation ident names, resolved as in a statement.
func (c Catalog) Relation(ctx context.Context, ident pgx.Identifier) (Relation, error) {
	var r Relation
	var kind string
	err := c.q.QueryRow(ctx, `SELECT c.oid, n.nspname, c.relname, c.relkind::text FROM pg_catalog.pg_class c
		JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = to_regclass($1)`, ident.Sanitize()).Scan(&r.OID, &r.Schema, &r.Name, &kind)
	if err != nil {
		return r, fmt.Errorf("table %s: %w", ident.Sanitize(), err)
	}
	r.Partitioned = RelKind(kind[0]) == PartitionedTable
	cols, err := c.columns(ctx, []uint32{r.OID})
	if err != nil {
		return r, fmt.Errorf("columns of %s: %w", ident.Sanitize(), err)
	}
	for _, col := range cols[r.OID] {
		if !col.Generated {
			r.Columns = append(r.Columns, RelationColumn{Name: col.Name, Type: col.TypeOID, Mod: col.TypeMod, Collation: col.Collation})
		}
	}
	return r, nil
}

// RelationsByOID returns the existing relations of oids, by OID, as now.
func (c Catalog) RelationsByOID(ctx context.Context, oids []uint32) (map[uint32]Relation, error) {
	rows, err := c.q.Query(ctx, `SELECT c.oid, n.nspname, c.relname, c.relkind::text FROM pg_catalog.pg_class c
		JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = ANY($1)`, oids)
	if err != nil {
		return nil, fmt.Errorf("relations by OID: %w", err)
	}
	out := map[uint32]Relation{}
	var r Relation
	var kind string
	if _, err := pgx.ForEachRow(rows, []any{&r.OID, &r.Schema, &r.Name, &kind}, func() error {
		r.Partitioned = RelKind(kind[0]) == PartitionedTable
		out[r.OID] = r
		return nil
	}); err != nil {
		return nil, fmt.Errorf("relations by OID: %w", err)
	}
	cols, err := c.columns(ctx, oids)
	if err != nil {
		return nil, fmt.Errorf("columns of relations by OID: %w", err)
	}
	for oid, r := range out {
		for _, col := range cols[oid] {
			if !col.Generated {
				r.Columns = append(r.Columns, RelationColumn{Name: col.Name, Type: col.TypeOID, Mod: col.TypeMod, Collation: col.Collation})
			}
		}
		out[oid] = r
	}
	return out, nil
}

// RelationNames returns the names of the relations of schema (the search
// path's when "") in byte order, at most 10,000: "did you mean" candidates.
func (c Catalog) RelationNames(ctx context.Context, schema string) ([]string, error) {
	rows, err := c.q.Query(ctx, `SELECT c.relname::text FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
WHERE c.relkind IN ('r', 'p', 'v', 'm', 'f') AND n.nspname = ANY(CASE WHEN $1 = '' THEN current_schemas(false) ELSE ARRAY[$1] END)
ORDER BY c.relname COLLATE "C" LIMIT 10000`, schema)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}

// SchemasWithTables are the non-system schemas holding a table, in name
// order: where to point --schema when the schemas asked hold none.
func (c Catalog) SchemasWithTables(ctx context.Context) ([]string, error) {
	rows, err := c.q.Query(ctx, `SELECT DISTINCT n.nspname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE c.relkind IN ('r', 'p') AND NOT c.relispartition AND n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg\_%'
ORDER BY 1`)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}
