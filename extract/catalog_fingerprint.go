package extract

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// Fingerprint is the catalog state that decides followed tables' items besides
// their rows; a checkpoint keeps it to find changes made while stopped.
type Fingerprint struct {
	// Tables are the followed tables by OID.
	Tables map[uint32]*TablePrint `json:"tables"`
	// Publication is the follow's publication.
	Publication PublicationPrint `json:"publication"`
}

// TablePrint is a followed table's part of a Fingerprint.
type TablePrint struct {
	// Name is schema.name, quoted where SQL needs it, when read.
	Name string `json:"name"`
	// Columns are by name, without dropped columns.
	Columns map[string]ColumnPrint `json:"columns"`
	// Storage is "name:relfilenode" per leaf partition (or the table), sorted.
	Storage []string `json:"storage"`
	// Partitions are "name bound" of every partition below the table, sorted.
	Partitions []string `json:"partitions,omitempty"`
	// Identities are the replica identities of a partitioned table's leaf
	// partitions (ReplicaIdentity.Partitions).
	Identities map[string]ReplicaIdentity `json:"identities,omitempty"`
}

// ColumnPrint is one column of a TablePrint.
type ColumnPrint struct {
	// Type is format_type(atttypid, atttypmod): "character varying(20)".
	Type string `json:"type"`
	// Generated is the expression of a STORED generated column.
	Generated string `json:"generated,omitempty"`
	// Enum are the labels, in enum order, of the enum the column holds.
	Enum []string `json:"enum,omitempty"`
}

// PublicationPrint is the publication part of a Fingerprint.
// https://www.postgresql.org/docs/current/catalog-pg-publication.html
type PublicationPrint struct {
	Exists                           bool `json:"exists"`
	Insert, Update, Delete, Truncate bool
	ViaRoot                          bool `json:"via_root"`
	// Tables are the followed tables it publishes by OID.
	Tables map[uint32]PublishedTable `json:"tables"`
}

// PublishedTable is a followed table as a publication publishes it.
type PublishedTable struct {
	RowFilter string `json:"row_filter,omitempty"`
	Columns   string `json:"columns,omitempty"`
}

// Fingerprint reads the Fingerprint of tables oids and publication pub.
func (c Catalog) Fingerprint(ctx context.Context, oids []uint32, pub string) (*Fingerprint, error) {
	q := c.q
	fp := &Fingerprint{Tables: map[uint32]*TablePrint{}, Publication: PublicationPrint{Tables: map[uint32]PublishedTable{}}}
	rows, err := q.Query(ctx, `SELECT c.oid, quote_ident(n.nspname) || '.' || quote_ident(c.relname),
	ARRAY(SELECT l.relid::regclass::text || ':' || coalesce(pg_relation_filenode(l.relid), 0)::text
		FROM (SELECT t.relid FROM pg_partition_tree(c.oid) t WHERE t.isleaf UNION SELECT c.oid WHERE c.relkind <> 'p') l ORDER BY 1),
	ARRAY(SELECT t.relid::regclass::text || ' ' || pg_get_expr(p.relpartbound, p.oid)
		FROM pg_partition_tree(c.oid) t JOIN pg_class p ON p.oid = t.relid WHERE t.level > 0 ORDER BY 1)
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = ANY($1)`, oids)
	if err != nil {
		return nil, fmt.Errorf("catalog of the followed tables: %w", err)
	}
	var (
		oid        uint32
		name       string
		storage    []string
		partitions []string
	)
	if _, err := pgx.ForEachRow(rows, []any{&oid, &name, &storage, &partitions}, func() error {
		if len(partitions) == 0 {
			partitions = nil
		}
		fp.Tables[oid] = &TablePrint{Name: name, Columns: map[string]ColumnPrint{}, Storage: storage, Partitions: partitions}
		return nil
	}); err != nil {
		return nil, fmt.Errorf("catalog of the followed tables: %w", err)
	}
	rows, err = q.Query(ctx, `SELECT a.attrelid, a.attname::text, format_type(a.atttypid, a.atttypmod),
	CASE WHEN a.attgenerated = 's' THEN coalesce(pg_get_expr(d.adbin, d.adrelid), '') ELSE '' END,
	ARRAY(SELECT e.enumlabel::text FROM pg_enum e
		WHERE e.enumtypid IN (a.atttypid, ty.typbasetype, ty.typelem, bt.typelem) ORDER BY e.enumtypid, e.enumsortorder)
FROM pg_attribute a
JOIN pg_type ty ON ty.oid = a.atttypid
LEFT JOIN pg_type bt ON bt.oid = ty.typbasetype
LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
WHERE a.attrelid = ANY($1) AND a.attnum > 0 AND NOT a.attisdropped`, oids)
	if err != nil {
		return nil, fmt.Errorf("columns of the followed tables: %w", err)
	}
	var col string
	var cp ColumnPrint
	if _, err := pgx.ForEachRow(rows, []any{&oid, &col, &cp.Type, &cp.Generated, &cp.Enum}, func() error {
		if t := fp.Tables[oid]; t != nil {
			if len(cp.Enum) == 0 {
				cp.Enum = nil
			}
			t.Columns[col] = cp
		}
		cp = ColumnPrint{}
		return nil
	}); err != nil {
		return nil, fmt.Errorf("columns of the followed tables: %w", err)
	}
	idents, err := c.ReplicaIdentities(ctx, oids)
	if err != nil {
		return nil, err
	}
	for oid, t := range fp.Tables {
		t.Identities = idents[oid].Partitions
	}
	if err := readPublicationPrint(ctx, q, pub, oids, &fp.Publication); err != nil {
		return nil, err
	}
	return fp, nil
}

// readPublicationPrint reads pub's part of a Fingerprint for oids.
func readPublicationPrint(ctx context.Context, q Querier, pub string, oids []uint32, p *PublicationPrint) error {
	err := q.QueryRow(ctx, "SELECT pubinsert, pubupdate, pubdelete, pubtruncate, pubviaroot FROM pg_catalog.pg_publication WHERE pubname = $1",
		pub).Scan(&p.Insert, &p.Update, &p.Delete, &p.Truncate, &p.ViaRoot)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("publication %s: %w", pub, err)
	}
	p.Exists = true
	var version int
	if err := q.QueryRow(ctx, "SELECT current_setting('server_version_num')::int").Scan(&version); err != nil {
		return fmt.Errorf("server_version_num: %w", err)
	}
	// Row filters and column lists came with PostgreSQL 15.
	filters := "'', ''"
	if version >= 150000 {
		filters = `coalesce((SELECT pg_get_expr(r.prqual, r.prrelid) FROM pg_publication_rel r
		WHERE r.prpubid = p.oid AND r.prrelid = c.oid), ''),
	coalesce((SELECT r.prattrs::text FROM pg_publication_rel r WHERE r.prpubid = p.oid AND r.prrelid = c.oid), '')`
	}
	rows, err := q.Query(ctx, `SELECT c.oid, `+filters+`
FROM pg_publication p
JOIN pg_publication_tables pt ON pt.pubname = p.pubname
JOIN pg_namespace n ON n.nspname = pt.schemaname
JOIN pg_class c ON c.relnamespace = n.oid AND c.relname = pt.tablename
WHERE p.pubname = $1 AND c.oid = ANY($2)`, pub, oids)
	if err != nil {
		return fmt.Errorf("tables of publication %s: %w", pub, err)
	}
	var oid uint32
	var t PublishedTable
	if _, err := pgx.ForEachRow(rows, []any{&oid, &t.RowFilter, &t.Columns}, func() error {
		p.Tables[oid] = t
		return nil
	}); err != nil {
		return fmt.Errorf("tables of publication %s: %w", pub, err)
	}
	return nil
}
