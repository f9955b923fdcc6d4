package extract

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// Relation is a table as logical replication describes it: its OID (which
// a rename keeps), its name as PostgreSQL resolves the mapping's, and its
// columns in attnum order without the dropped and generated ones (as
// pgoutput's Relation message lists them), each with its type's OID.
type Relation struct {
	OID          uint32
	Schema, Name string
	Columns      []RelationColumn
	// Partitioned is true for a partitioned table (relkind 'p'), whose
	// changes a publication sends as its partitions' unless
	// publish_via_partition_root.
	Partitioned bool
}

// RelationColumn is one column of a Relation.
type RelationColumn struct {
	Name string
	Type uint32
}

// DescribeRelation returns the relation ident names, resolved as
// PostgreSQL resolves it (search_path for an unqualified name).
func DescribeRelation(ctx context.Context, conn *pgx.Conn, ident pgx.Identifier) (Relation, error) {
	var r Relation
	var kind string
	err := conn.QueryRow(ctx, `SELECT c.oid, n.nspname, c.relname, c.relkind::text FROM pg_catalog.pg_class c
		JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = to_regclass($1)`, ident.Sanitize()).Scan(&r.OID, &r.Schema, &r.Name, &kind)
	if err != nil {
		return r, fmt.Errorf("table %s: %w", ident.Sanitize(), err)
	}
	r.Partitioned = kind == "p"
	rows, err := conn.Query(ctx, `SELECT attname::text, atttypid FROM pg_catalog.pg_attribute
		WHERE attrelid = $1 AND attnum > 0 AND NOT attisdropped AND attgenerated = '' ORDER BY attnum`, r.OID)
	if err != nil {
		return r, fmt.Errorf("columns of %s: %w", ident.Sanitize(), err)
	}
	r.Columns, err = pgx.CollectRows(rows, func(row pgx.CollectableRow) (RelationColumn, error) {
		var c RelationColumn
		err := row.Scan(&c.Name, &c.Type)
		return c, err
	})
	if err != nil {
		return r, fmt.Errorf("columns of %s: %w", ident.Sanitize(), err)
	}
	return r, nil
}
