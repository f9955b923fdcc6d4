// Package draft writes a first mapping from a PostgreSQL database's schema and
// data: Read takes tables, keys, row counts and foreign key fan-outs in one
// REPEATABLE READ snapshot (Catalog), Propose applies docs/init-and-plan.md's
// single-table rules, and Write renders a mapping whose comments give each
// decision's numbers.
package draft

import (
	"context"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/pg2dynamo/pg2dynamo/extract"
	"github.com/pg2dynamo/pg2dynamo/mapping"
)

// Catalog is what Read found: the tables in (schema, name) order, with keys and
// measurements.
type Catalog struct {
	// Database is current_database() of the connection.
	Database string
	// Schemas are the schemas read, in the order given.
	Schemas []string
	// Exclude are the patterns of the tables left out (see Read).
	Exclude []string
	Tables  []*Table
}

// Table is one ordinary or partitioned table (partitions are read through their
// parent, not listed).
type Table struct {
	Schema, Name string
	// Columns in attnum order.
	Columns []Column
	// PrimaryKey is the primary key's columns in key order; nil without one.
	PrimaryKey []string
	// Uniques are the non-primary unique keys: UNIQUE constraints by name, then
	// CREATE UNIQUE INDEX column indexes (not partial) by name. No two rows
	// share all their values, NULLs aside.
	Uniques [][]string
	// UniqueColumns are, for an unidentified table, columns distinct and never
	// NULL in the data (nil without rows): each could be its primary key.
	UniqueColumns []string
	// OwnID is, when the primary key has more columns than the own id (Pagila's
	// payment: (payment_date, payment_id)), that id column: id or named after
	// the table, in no foreign key, distinct and never NULL in the data; else
	// "".
	OwnID string
	// Suggestions are relations column names suggest and no foreign key
	// declares, in column order.
	Suggestions []*Suggestion
	// ForeignKeys are the outgoing foreign keys by name, each with its measured
	// fan-out.
	ForeignKeys []*ForeignKey
	// Rows is count(*) of the table.
	Rows int64
	// AvgRowBytes is a row's average pg_column_size (stored, maybe compressed):
	// a lower bound of its item size.
	AvgRowBytes int64
	// Delimited are the text columns ProbeDelimited found holding lists, each
	// with a sample value.
	Delimited map[string]string
}

// Column is a table column: name, format_type (e.g. "character varying(40)")
// and NOT NULL.
type Column = extract.TableColumn

// ForeignKey is one foreign key constraint of a child table.
type ForeignKey struct {
	Name string
	// Columns of the child in constraint order; RefColumns the parent's they
	// reference, pairwise.
	Columns               []string
	RefSchema, RefTable   string
	RefColumns            []string
	Fanout                Fanout
	columnsNotNull, valid bool
	// partial: only some partitions of a partitioned table declare it
	// (extract.ForeignKey.Partial).
	partial bool
	// suggested is the undeclared relation it was drafted from; nil for a
	// declared foreign key.
	suggested *Suggestion
}

// Fanout is a relationship's measured shape: child rows with all foreign key
// columns set (Children), grouped by parent (Parents: distinct keys).
type Fanout struct {
	Children, Parents int64
	// Max is the largest number of children of one parent.
	Max int64
}

// Avg is the mean number of children per parent that has any (0 when none).
func (f Fanout) Avg() float64 {
	if f.Parents == 0 {
		return 0
	}
	return float64(f.Children) / float64(f.Parents)
}

// NotNull reports whether every foreign key column is NOT NULL, so every child
// has a parent.
func (fk *ForeignKey) NotNull() bool { return fk.columnsNotNull }

// Column returns the named column and whether it exists.
func (t *Table) Column(name string) (Column, bool) {
	for _, c := range t.Columns {
		if c.Name == name {
			return c, true
		}
	}
	return Column{}, false
}

// Ident is the table's quoted, schema-qualified name for SQL.
func (t *Table) Ident() string { return pgx.Identifier{t.Schema, t.Name}.Sanitize() }

// Read reads schemas' catalog (default public) and measures every table and
// foreign key in one REPEATABLE READ, READ ONLY snapshot (a count(*) scan per
// table, a GROUP BY scan per foreign key). Tables exclude matches, and foreign
// keys to them, are left unmeasured. measured, if set, is called after each
// table with its 1-based position of n. Errors are the database's wrapped with
// the table, or path.ErrBadPattern.
func Read(ctx context.Context, conn *pgx.Conn, schemas, exclude []string, measured func(t *Table, i, n int)) (*Catalog, error) {
	for _, p := range exclude {
		if _, err := path.Match(p, ""); err != nil {
			return nil, fmt.Errorf("exclude %q: %w", p, err)
		}
	}
	if len(schemas) == 0 {
		schemas = []string{"public"}
	}
	tx, err := conn.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return nil, err
	}
	defer tx.Rollback(ctx) //nolint:errcheck // read only
	cat := &Catalog{Schemas: schemas, Exclude: exclude}
	if err := tx.QueryRow(ctx, "SELECT current_database()").Scan(&cat.Database); err != nil {
		return nil, err
	}
	tables, err := extract.NewCatalog(tx).Tables(ctx, schemas)
	if err != nil {
		return nil, err
	}
	cat.Tables = fromCatalog(tables, exclude)
	for i, t := range cat.Tables {
		if err := measure(ctx, tx, t); err != nil {
			return nil, fmt.Errorf("measuring %s: %w", t.Ident(), err)
		}
		if measured != nil {
			measured(t, i+1, len(cat.Tables))
		}
	}
	if err := suggestRelations(ctx, tx, cat); err != nil {
		return nil, err
	}
	return cat, nil
}

// fromCatalog turns the catalog's tables into the draft's in order, without
// partitions and excluded tables; foreign keys to those stay but are invalid,
// since nothing nests under an unmigrated parent.
func fromCatalog(in []*extract.Table, exclude []string) []*Table {
	var out []*Table
	var from []*extract.Table
	for _, et := range in {
		t := &Table{Schema: et.Schema, Name: et.Name, Columns: et.Columns, PrimaryKey: et.PrimaryKey()}
		if et.Parent != nil || Excluded(t, exclude) {
			continue
		}
		for _, constraint := range []bool{true, false} {
			for _, k := range et.Keys {
				if !k.Primary && k.Constraint == constraint {
					t.Uniques = append(t.Uniques, k.Columns)
				}
			}
		}
		out, from = append(out, t), append(from, et)
	}
	cat := &Catalog{Tables: out}
	for i, t := range out {
		for _, efk := range from[i].ForeignKeys {
			fk := &ForeignKey{Name: efk.Name, Columns: efk.Columns, RefSchema: efk.RefSchema, RefTable: efk.RefTable,
				RefColumns: efk.RefColumns, columnsNotNull: true, partial: efk.Partial}
			for _, c := range fk.Columns {
				if col, _ := t.Column(c); !col.NotNull {
					fk.columnsNotNull = false
				}
			}
			fk.valid = cat.Table(fk.RefSchema, fk.RefTable) != nil
			t.ForeignKeys = append(t.ForeignKeys, fk)
		}
	}
	return out
}

// Excluded reports whether an exclude pattern (path.Match syntax) matches t's
// name or schema-qualified name.
func Excluded(t *Table, exclude []string) bool {
	for _, p := range exclude {
		if ok, _ := path.Match(p, t.Name); ok {
			return true
		}
		if ok, _ := path.Match(p, t.Schema+"."+t.Name); ok {
			return true
		}
	}
	return false
}

// Table returns the table schema.name, or nil.
func (c *Catalog) Table(schema, name string) *Table {
	for _, t := range c.Tables {
		if t.Schema == schema && t.Name == name {
			return t
		}
	}
	return nil
}

// measure counts the rows and their average stored size, and each foreign key's
// fan-out.
func measure(ctx context.Context, tx pgx.Tx, t *Table) error {
	q := fmt.Sprintf("SELECT count(*), coalesce(avg(pg_column_size(t.*)), 0)::bigint FROM %s AS t", t.Ident())
	if err := tx.QueryRow(ctx, q).Scan(&t.Rows, &t.AvgRowBytes); err != nil {
		return err
	}
	if key, _ := identity(t); key == nil && len(t.PrimaryKey) == 0 && t.Rows > 0 {
		if err := measureUnique(ctx, tx, t); err != nil {
			return err
		}
	}
	if c := ownIDCandidate(t); c != "" && t.Rows > 0 {
		id := pgx.Identifier{c}.Sanitize()
		var distinct int64
		if err := tx.QueryRow(ctx, fmt.Sprintf("SELECT count(DISTINCT %s) FROM %s", id, t.Ident())).Scan(&distinct); err != nil {
			return err
		}
		if distinct == t.Rows {
			t.OwnID = c
		}
	}
	for _, fk := range t.ForeignKeys {
		cols := make([]string, len(fk.Columns))
		for i, c := range fk.Columns {
			cols[i] = pgx.Identifier{c}.Sanitize()
		}
		notNull := strings.Join(cols, " IS NOT NULL AND ") + " IS NOT NULL"
		q := fmt.Sprintf(`SELECT coalesce(sum(n), 0)::bigint, count(*), coalesce(max(n), 0)
FROM (SELECT count(*) AS n FROM %s WHERE %s GROUP BY %s) AS g`, t.Ident(), notNull, strings.Join(cols, ", "))
		if err := tx.QueryRow(ctx, q).Scan(&fk.Fanout.Children, &fk.Fanout.Parents, &fk.Fanout.Max); err != nil {
			return fmt.Errorf("foreign key %s: %w", fk.Name, err)
		}
	}
	return nil
}

// orderable are the type names (format_type up to '(' or '[') count(DISTINCT)
// compares, searched for a key of an unidentified table.
var orderable = []string{"smallint", "integer", "bigint", "numeric", "text", "character varying", "character", "uuid",
	"date", "timestamp without time zone", "timestamp with time zone"}

// measureUnique sets t.UniqueColumns: orderable columns (at most 20) all
// distinct and non-NULL, in one scan.
func measureUnique(ctx context.Context, tx pgx.Tx, t *Table) error {
	var cols, exprs []string
	for _, c := range t.Columns {
		base, _, _ := strings.Cut(c.Type, "(")
		if len(cols) == 20 || !slices.Contains(orderable, base) || strings.HasSuffix(c.Type, "]") {
			continue
		}
		id := pgx.Identifier{c.Name}.Sanitize()
		cols, exprs = append(cols, c.Name), append(exprs, fmt.Sprintf("count(DISTINCT %s), count(%s)", id, id))
	}
	if len(cols) == 0 {
		return nil
	}
	counts := make([]int64, 2*len(cols))
	dest := make([]any, len(counts))
	for i := range counts {
		dest[i] = &counts[i]
	}
	if err := tx.QueryRow(ctx, fmt.Sprintf("SELECT %s FROM %s", strings.Join(exprs, ", "), t.Ident())).Scan(dest...); err != nil {
		return err
	}
	for i, c := range cols {
		if counts[2*i] == t.Rows && counts[2*i+1] == t.Rows {
			t.UniqueColumns = append(t.UniqueColumns, c)
		}
	}
	return nil
}

// ownIDCandidate is the composite primary key's id column (id, or named after
// the table), NOT NULL and in no foreign key (Table.OwnID); "" for none.
func ownIDCandidate(t *Table) string {
	if len(t.PrimaryKey) < 2 {
		return ""
	}
	names := []string{"id", strings.ToLower(singular(asciiSnake(t.Name))) + "_id", strings.ToLower(asciiSnake(t.Name)) + "_id"}
	for _, c := range t.PrimaryKey {
		if !slices.Contains(names, strings.ToLower(c)) {
			continue
		}
		inFK := slices.ContainsFunc(t.ForeignKeys, func(fk *ForeignKey) bool { return slices.Contains(fk.Columns, c) })
		if col, _ := t.Column(c); col.NotNull && !inFK && mapping.Nameable(c) {
			return c
		}
	}
	return ""
}
