package extract

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5"
)

// Publication is a logical replication publication.
// https://www.postgresql.org/docs/current/catalog-pg-publication.html
type Publication struct {
	Name string
	// Insert, Update, Delete and Truncate say which changes it sends.
	Insert, Update, Delete, Truncate bool
	// ViaRoot is publish_via_partition_root.
	ViaRoot bool
	// Tables are the tables it publishes in byte order (roots with ViaRoot).
	Tables []pgx.Identifier
}

// Publishes reports whether p publishes the table {schema, name}.
func (p *Publication) Publishes(table pgx.Identifier) bool {
	return slices.ContainsFunc(p.Tables, func(t pgx.Identifier) bool { return slices.Equal(t, table) })
}

// Publication returns publication name and whether it exists.
func (c Catalog) Publication(ctx context.Context, name string) (*Publication, bool, error) {
	p := &Publication{Name: name}
	err := c.q.QueryRow(ctx, "SELECT pubinsert, pubupdate, pubdelete, pubtruncate, pubviaroot FROM pg_catalog.pg_publication WHERE pubname = $1",
		name).Scan(&p.Insert, &p.Update, &p.Delete, &p.Truncate, &p.ViaRoot)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("publication %s: %w", name, err)
	}
	rows, err := c.q.Query(ctx, `SELECT schemaname::text, tablename::text FROM pg_catalog.pg_publication_tables WHERE pubname = $1
ORDER BY schemaname COLLATE "C", tablename COLLATE "C"`, name)
	if err != nil {
		return nil, false, fmt.Errorf("tables of publication %s: %w", name, err)
	}
	var schema, table string
	_, err = pgx.ForEachRow(rows, []any{&schema, &table}, func() error {
		p.Tables = append(p.Tables, pgx.Identifier{schema, table})
		return nil
	})
	if err != nil {
		return nil, false, fmt.Errorf("tables of publication %s: %w", name, err)
	}
	return p, true, nil
}

// ListedTables returns those of the tables oids that publication pub lists by
// name (pg_publication_rel), schema-qualified and quoted where SQL needs it,
// in byte order: the ones ALTER PUBLICATION … DROP TABLE takes out, not those
// it publishes FOR ALL TABLES or FOR TABLES IN SCHEMA.
// https://www.postgresql.org/docs/current/catalog-pg-publication-rel.html
func (c Catalog) ListedTables(ctx context.Context, pub string, oids []uint32) ([]string, error) {
	rows, err := c.q.Query(ctx, `SELECT quote_ident(n.nspname) || '.' || quote_ident(c.relname) FROM pg_catalog.pg_publication p
		JOIN pg_catalog.pg_publication_rel r ON r.prpubid = p.oid JOIN pg_catalog.pg_class c ON c.oid = r.prrelid
		JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
		WHERE p.pubname = $1 AND r.prrelid = ANY($2)`, pub, oids)
	if err != nil {
		return nil, fmt.Errorf("tables of publication %s: %w", pub, err)
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("tables of publication %s: %w", pub, err)
	}
	slices.Sort(names)
	return names, nil
}

// Slot is a replication slot (pg_replication_slots).
// https://www.postgresql.org/docs/current/view-pg-replication-slots.html
type Slot struct {
	Name string
	// ConfirmedFlush is where a logical slot streams from again; 0 for none.
	ConfirmedFlush pglogrepl.LSN
	// Active is true while a process streams from the slot.
	Active bool
}

// Slot returns slot name and true, or false when it does not exist.
func (c Catalog) Slot(ctx context.Context, name string) (Slot, bool, error) {
	s := Slot{Name: name}
	var lsn *string
	err := c.q.QueryRow(ctx, "SELECT confirmed_flush_lsn::text, active FROM pg_catalog.pg_replication_slots WHERE slot_name = $1",
		name).Scan(&lsn, &s.Active)
	if errors.Is(err, pgx.ErrNoRows) {
		return s, false, nil
	}
	if err != nil {
		return s, false, fmt.Errorf("replication slot %s: %w", name, err)
	}
	if lsn != nil {
		if s.ConfirmedFlush, err = pglogrepl.ParseLSN(*lsn); err != nil {
			return s, true, fmt.Errorf("replication slot %s: %w", name, err)
		}
	}
	return s, true, nil
}
