// Package extract reads an entity's rows from PostgreSQL with pgx: it
// describes each source's columns, then streams rows, never a whole
// table, inside one read-only REPEATABLE READ transaction, so that every
// entity is read from the same snapshot.
package extract

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/pg2dynamo/pg2dynamo/internal/suggest"
	"github.com/pg2dynamo/pg2dynamo/mapping"
)

// DefaultConnectTimeout bounds connecting to PostgreSQL when the connection
// string sets no connect_timeout.
const DefaultConnectTimeout = 10 * time.Second

// Source is one connection to the source database. Its methods are not safe
// for concurrent use.
type Source struct {
	conn *pgx.Conn
	cfg  *pgx.ConnConfig
	tx   pgx.Tx
	name string
	// snapshot is the ID of the snapshot exported from tx, once
	// ExportSnapshot has run.
	snapshot string
}

// Connect opens a connection. connString is a PostgreSQL URL or keyword/value
// string; empty means the libpq environment (PGHOST, PGPORT, PGUSER,
// PGDATABASE, PGPASSWORD, …) as psql reads it. The session is pinned to
// SessionSettings, and so is every Fork of it. Errors never contain the
// password.
func Connect(ctx context.Context, connString string) (*Source, error) {
	cfg, err := pgx.ParseConfig(connString)
	if err != nil {
		// pgconn's ParseConfigError redacts the password.
		return nil, fmt.Errorf("source: %w", err)
	}
	if cfg.ConnectTimeout == 0 {
		cfg.ConnectTimeout = DefaultConnectTimeout
	}
	if cfg.RuntimeParams["application_name"] == "" {
		cfg.RuntimeParams["application_name"] = "pg2dynamo"
	}
	cfg.AfterConnect = pinSession
	name := fmt.Sprintf("postgres://%s@%s:%d/%s", cfg.User, cfg.Host, cfg.Port, cfg.Database)
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("connect to source %s: %w", name, err)
	}
	return &Source{conn: conn, cfg: cfg, name: name}, nil
}

// Name identifies the source for messages, without the password:
// "postgres://user@host:port/database".
func (s *Source) Name() string { return s.name }

// Conn returns the underlying connection.
func (s *Source) Conn() *pgx.Conn { return s.conn }

// ForgetStatements drops every statement pgx prepared and cached on the
// connection (pgx.Conn.DeallocateAll), so that each is prepared again at
// its next run: once a column a prepared statement reads is retyped,
// PostgreSQL refuses to run it ("cached plan must not change result type",
// SQLSTATE 0A000). Call it after a change of the catalog; it may run
// inside a transaction, which it leaves open.
// https://www.postgresql.org/docs/current/sql-deallocate.html
func (s *Source) ForgetStatements(ctx context.Context) error {
	if err := s.conn.DeallocateAll(ctx); err != nil {
		return fmt.Errorf("drop the prepared statements: %w", err)
	}
	return nil
}

// Catalog returns the catalog reader of the source's connection: it reads
// in the snapshot's transaction once Begin has run.
func (s *Source) Catalog() Catalog { return NewCatalog(s.conn) }

// Close ends the snapshot transaction, if any, and closes the connection.
func (s *Source) Close(ctx context.Context) error {
	_ = s.End(ctx)
	return s.conn.Close(ctx)
}

// End ends the snapshot begun by Begin (the transaction is rolled back: it
// only read). It is a no-op without a snapshot.
func (s *Source) End(ctx context.Context) error {
	if s.tx == nil {
		return nil
	}
	err := s.tx.Rollback(ctx)
	s.tx, s.snapshot = nil, ""
	return err
}

// Begin starts the read-only REPEATABLE READ transaction that every later
// Count and Stream reads from: one snapshot, one consistent point in time.
func (s *Source) Begin(ctx context.Context) error {
	if s.tx != nil {
		return errors.New("source: snapshot already begun")
	}
	tx, err := s.conn.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return fmt.Errorf("begin snapshot: %w", err)
	}
	s.tx = tx
	return nil
}

// Lock takes ACCESS SHARE locks on tables in the snapshot's transaction
// until End, so that an ALTER TABLE or DROP TABLE of one waits. Called
// after Begin and before anything reads, it makes the catalog rows the
// snapshot reads agree with the catalog queries are planned against (the
// current one). A missing table is PostgreSQL's error (SQLSTATE 42P01).
// https://www.postgresql.org/docs/current/sql-lock.html
func (s *Source) Lock(ctx context.Context, tables []pgx.Identifier) error {
	if s.tx == nil {
		return errors.New("source: lock without a snapshot")
	}
	names := make([]string, len(tables))
	for i, t := range tables {
		names[i] = t.Sanitize()
	}
	// No arguments: the simple protocol, which takes no snapshot for LOCK.
	if _, err := s.tx.Exec(ctx, "LOCK TABLE "+strings.Join(names, ", ")+" IN ACCESS SHARE MODE"); err != nil {
		return fmt.Errorf("lock %s: %w", strings.Join(names, ", "), err)
	}
	return nil
}

// BeginAt is Begin on the snapshot snapshot, exported by another session
// (pg_export_snapshot(), or a replication slot created with
// EXPORT_SNAPSHOT); Fork shares it. The exporting session must keep it
// alive (a slot's: run no other command) until every fork has begun.
// https://www.postgresql.org/docs/current/sql-set-transaction.html
func (s *Source) BeginAt(ctx context.Context, snapshot string) error {
	if err := s.Begin(ctx); err != nil {
		return err
	}
	if _, err := s.tx.Exec(ctx, "SET TRANSACTION SNAPSHOT '"+strings.ReplaceAll(snapshot, "'", "''")+"'"); err != nil {
		s.End(ctx)
		return fmt.Errorf("import snapshot %s: %w", snapshot, err)
	}
	s.snapshot = snapshot
	return nil
}

// ExportSnapshot exports the snapshot begun by Begin with
// pg_export_snapshot(), as pg_dump -j does, and returns its ID, importable
// by other connections (SET TRANSACTION SNAPSHOT) until End or Close.
// https://www.postgresql.org/docs/current/functions-admin.html#FUNCTIONS-SNAPSHOT-SYNCHRONIZATION
func (s *Source) ExportSnapshot(ctx context.Context) (string, error) {
	if s.tx == nil {
		return "", errors.New("source: ExportSnapshot before Begin")
	}
	if s.snapshot == "" {
		if err := s.tx.QueryRow(ctx, "SELECT pg_export_snapshot()").Scan(&s.snapshot); err != nil {
			return "", fmt.Errorf("export snapshot: %w", err)
		}
	}
	return s.snapshot, nil
}

// Fork opens another connection to the same database, with the same
// settings, reading in s's snapshot (ExportSnapshot). Close the fork when
// done; s must stay open until every fork has begun.
func (s *Source) Fork(ctx context.Context) (*Source, error) {
	id, err := s.ExportSnapshot(ctx)
	if err != nil {
		return nil, err
	}
	conn, err := pgx.ConnectConfig(ctx, s.cfg.Copy())
	if err != nil {
		return nil, fmt.Errorf("connect to source %s: %w", s.name, err)
	}
	f := &Source{conn: conn, cfg: s.cfg, name: s.name}
	tx, err := conn.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err == nil {
		// SET takes no parameters; the ID is PostgreSQL's own text
		// (hex digits and dashes), quoted as a literal all the same.
		_, err = tx.Exec(ctx, "SET TRANSACTION SNAPSHOT '"+strings.ReplaceAll(id, "'", "''")+"'")
	}
	if err != nil {
		conn.Close(ctx)
		return nil, fmt.Errorf("import snapshot %s: %w", id, err)
	}
	f.tx = tx
	return f, nil
}

// Positions returns the positions (as Query.Position gives them) of q's
// rows numbered at, counting from 1 in q's order within its After and
// Until: out[j] is row at[j]'s, nil when q reads fewer rows. q must read
// in order (q.OrderBy set). It is one statement, row_number() along the
// primary key's index up to max(at), not one OFFSET scan per position.
func (s *Source) Positions(ctx context.Context, q Query, at []int64) ([][]string, error) {
	if s.tx == nil {
		return nil, errors.New("source: Positions before Begin")
	}
	if len(q.OrderBy) == 0 {
		return nil, errors.New("source: Positions of a query that reads in no order")
	}
	out := make([][]string, len(at))
	want := map[int64][]int{} // row number → indexes in at
	for j, n := range at {
		if n >= 1 {
			want[n] = append(want[n], j)
		}
	}
	if len(want) == 0 {
		return out, nil
	}
	numbers := make([]int64, 0, len(want))
	for n := range want {
		numbers = append(numbers, n)
	}
	keys := make([]string, len(q.OrderBy))
	names := make([]string, len(q.OrderBy))
	sel := make([]string, len(q.OrderBy))
	for i, c := range q.OrderBy {
		keys[i] = "src." + ident(c.Name)
		names[i] = fmt.Sprintf("k%d", i+1)
		sel[i] = outputText("numbered." + names[i])
	}
	args := q.Args()
	// The LIMIT lets the executor stop at the last row asked for; the
	// rows come back in any order, each with its number.
	sql := fmt.Sprintf("SELECT numbered.n, %s FROM (SELECT row_number() OVER (ORDER BY %s), %s FROM %s%s) AS numbered(n, %s) WHERE numbered.n = ANY($%d::int8[]) LIMIT %d",
		strings.Join(sel, ", "), strings.Join(keys, ", "), strings.Join(keys, ", "), from(q.Source), q.whereClause(),
		strings.Join(names, ", "), len(args)+1, len(numbers))
	rows, err := s.tx.Query(ctx, sql, append(args, numbers)...)
	if err != nil {
		return nil, fmt.Errorf("positions in %s: %w", q.Source, err)
	}
	defer rows.Close()
	for rows.Next() {
		var n int64
		vals := make([]string, len(q.OrderBy))
		dst := []any{&n}
		for j := range vals {
			dst = append(dst, &vals[j])
		}
		if err := rows.Scan(dst...); err != nil {
			return nil, fmt.Errorf("positions in %s: %w", q.Source, err)
		}
		for _, j := range want[n] {
			out[j] = vals
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("positions in %s: %w", q.Source, err)
	}
	return out, nil
}

// CanonicalPosition has PostgreSQL read pos, a position of q's read,
// through each OrderBy column's input and output functions: what
// Query.Position gives for the row of those values. ok is false when pos
// has not one text per OrderBy column or an input function refuses its
// text (SQLSTATE class 22; tried under a savepoint, so the snapshot stays).
func (s *Source) CanonicalPosition(ctx context.Context, q Query, pos []string) (canon []string, ok bool, err error) {
	if s.tx == nil {
		return nil, false, errors.New("source: CanonicalPosition before Begin")
	}
	if len(q.OrderBy) == 0 || len(pos) != len(q.OrderBy) {
		return nil, false, nil
	}
	sel := make([]string, len(q.OrderBy))
	args := make([]any, len(pos))
	for i, c := range q.OrderBy {
		sel[i] = outputText(fmt.Sprintf("$%d::text::%s", i+1, typeExpr(c)))
		args[i] = pos[i]
	}
	// Not pgx's nested transaction, which never releases its savepoint:
	// pg_export_snapshot refuses to run in a subtransaction.
	if _, err := s.tx.Exec(ctx, "SAVEPOINT pg2dynamo_position"); err != nil {
		return nil, false, fmt.Errorf("read position: %w", err)
	}
	canon = make([]string, len(pos))
	dst := make([]any, len(canon))
	for i := range canon {
		dst[i] = &canon[i]
	}
	err = s.tx.QueryRow(ctx, "SELECT "+strings.Join(sel, ", "), args...).Scan(dst...)
	end := "RELEASE SAVEPOINT pg2dynamo_position"
	if err != nil {
		end = "ROLLBACK TO SAVEPOINT pg2dynamo_position; " + end
	}
	if _, eerr := s.tx.Exec(ctx, end); eerr != nil {
		return nil, false, fmt.Errorf("read position: %w", errors.Join(err, eerr))
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) && strings.HasPrefix(pe.Code, "22") {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("read position %q: %w", pos, err)
	}
	return canon, true, nil
}

// Column is one result column of an entity's source.
type Column struct {
	// Name is the column name as PostgreSQL reports it.
	Name string
	// Type is the PostgreSQL type name (pg_type.typname), of the element
	// for an array: "int4", "numeric", "jsonb", "ticket_status".
	Type string
	// Array is true for an array column.
	Array bool
	// Dims is the number of dimensions an array column is declared with
	// (pg_attribute.attndims: 1 for int[], 2 for int[][]), 0 when unknown
	// (a view's column, an expression). PostgreSQL does not enforce it.
	Dims int
	// AsText is true when the column is read in its text form (its output
	// function's, what psql prints): json, jsonb, enums and every type
	// without a native conversion.
	AsText bool
	// Delim is, for an array, the delimiter between its elements in its
	// text form (pg_type.typdelim of the element type): ',' for every
	// built-in type but box, whose is ';'. 0 when not known.
	Delim byte
	// IntDigits is, for numeric(p,s), the digits before the decimal point
	// (p−s). 0 otherwise.
	IntDigits int
	// Precision and Scale are, for numeric(p,s), p and s: the default key
	// width is p−s digits and s decimals. Precision is 0 for a numeric
	// without a declared precision, and for every other type.
	Precision, Scale int
	// PrimaryKey is true for a column of the source table's primary key
	// (never for a query source). Rejects name rows by these columns.
	PrimaryKey bool
	// KeyPos is the column's 1-based position in the primary key, 0 when
	// it is not part of it.
	KeyPos int
}

// nativeTypes are read in pgx's binary form and converted natively by
// package transform. Everything else is read as text.
var nativeTypes = map[string]bool{
	"int2": true, "int4": true, "int8": true, "numeric": true,
	"float4": true, "float8": true,
	"text": true, "varchar": true, "bpchar": true, "name": true,
	"uuid": true, "bool": true, "bytea": true,
	"date": true, "timestamp": true, "timestamptz": true,
}

// Describe returns the columns of e's source without reading any row. An
// unknown table or a query PostgreSQL rejects is reported as a
// *mapping.Error located at the entity's source in the mapping file.
func (s *Source) Describe(ctx context.Context, m *mapping.Mapping, e *mapping.Entity) ([]Column, error) {
	return s.DescribeSource(ctx, m, mapping.Path(mapping.KeyEntities, e.Name, mapping.KeySource), e.Source)
}

// relationHint is a "did you mean" for src's table among the relations of
// its schema (of the search path when unqualified), or "" when none is
// close or the catalog cannot be read.
func (s *Source) relationHint(ctx context.Context, src mapping.Source) string {
	names, err := s.Catalog().RelationNames(ctx, src.Schema)
	if err != nil {
		return ""
	}
	return suggest.Hint(src.Table, names)
}

// DescribeSource returns the columns of src, a source named at path in the
// mapping (errors about it are located there).
func (s *Source) DescribeSource(ctx context.Context, m *mapping.Mapping, path string, src mapping.Source) ([]Column, error) {
	sd, err := s.conn.Prepare(ctx, "", "SELECT * FROM "+from(src))
	if err != nil {
		var pe *pgconn.PgError
		if !errors.As(err, &pe) {
			return nil, fmt.Errorf("describe %s: %w", path, err)
		}
		if src.IsQuery() {
			return nil, m.Errorf(mapping.Path(path, mapping.KeyQuery),
				"PostgreSQL rejects the query: %s (SQLSTATE %s)", pe.Message, pe.Code)
		}
		if pe.Code == "42P01" || pe.Code == "3F000" { // undefined_table, invalid_schema_name
			return nil, m.Errorf(mapping.Path(path, mapping.KeySourceTbl),
				"%s in %s: expected an existing table or view%s", pe.Message, s.name, s.relationHint(ctx, src))
		}
		return nil, m.Errorf(path, "PostgreSQL rejects the source: %s (SQLSTATE %s)", pe.Message, pe.Code)
	}
	oids := make([]uint32, len(sd.Fields))
	for i, f := range sd.Fields {
		oids[i] = f.DataTypeOID
	}
	types, err := s.Catalog().types(ctx, oids)
	if err != nil {
		return nil, fmt.Errorf("describe %s: %w", path, err)
	}
	dims, err := s.Catalog().arrayDims(ctx, sd.Fields, types)
	if err != nil {
		return nil, fmt.Errorf("describe %s: %w", path, err)
	}
	var pkCols []string
	if !src.IsQuery() {
		keys, err := s.UniqueKeys(ctx, src)
		if err != nil {
			return nil, fmt.Errorf("describe %s: %w", path, err)
		}
		if len(keys) > 0 && keys[0].Primary {
			pkCols = keys[0].Columns
		}
	}
	cols := make([]Column, len(sd.Fields))
	for i, f := range sd.Fields {
		t := types[f.DataTypeOID]
		c := t.column()
		c.Name, c.PrimaryKey, c.KeyPos = f.Name, slices.Contains(pkCols, f.Name), slices.Index(pkCols, f.Name)+1
		if c.Array {
			c.Dims = dims[i]
		}
		if c.Type == "numeric" && f.TypeModifier >= 4 {
			// typmod = (precision << 16 | scale) + VARHDRSZ
			p, sc := int((f.TypeModifier-4)>>16), int((f.TypeModifier-4)&0xffff)
			if sc <= p {
				c.IntDigits = p - sc
				c.Precision, c.Scale = p, sc
			}
		}
		cols[i] = c
	}
	return cols, nil
}

// UniqueKeys returns the primary key (first) and the other unique indexes
// of a table source, leaving out partial and expression indexes; none for a
// view or a query (see Catalog.UniqueKeys).
func (s *Source) UniqueKeys(ctx context.Context, src mapping.Source) ([]UniqueKey, error) {
	if src.IsQuery() {
		return nil, nil
	}
	return s.Catalog().UniqueKeys(ctx, tableIdent(src))
}

// Count returns the number of rows e's source holds in the snapshot.
func (s *Source) Count(ctx context.Context, e *mapping.Entity) (int64, error) {
	if s.tx == nil {
		return 0, errors.New("source: Count before Begin")
	}
	var n int64
	if err := s.tx.QueryRow(ctx, countSQL(e.Source)).Scan(&n); err != nil {
		return 0, fmt.Errorf("count %s: %w", e.Name, err)
	}
	return n, nil
}

// CountRange returns the number of rows q reads in the snapshot: those of
// its source after q.After and up to q.Until (PostgreSQL's count(*) over
// the same WHERE as Stream's).
func (s *Source) CountRange(ctx context.Context, q Query) (int64, error) {
	if s.tx == nil {
		return 0, errors.New("source: CountRange before Begin")
	}
	var n int64
	if err := s.tx.QueryRow(ctx, "SELECT count(*) FROM "+from(q.Source)+q.whereClause(), q.Args()...).Scan(&n); err != nil {
		return 0, fmt.Errorf("count a range: %w", err)
	}
	return n, nil
}

// Stream reads the rows of q from the snapshot and calls fn with each
// row's values (q.Columns, then each join's values), as pgx decodes them
// (nil for NULL; arrays nested per dimension). fn must not keep the slice.
// Stream stops at fn's first error and returns it; errors from PostgreSQL
// are wrapped with name (the entity) and the number of rows read.
func (s *Source) Stream(ctx context.Context, name string, q Query, fn func(values []any) error) error {
	if s.tx == nil {
		return errors.New("source: Stream before Begin")
	}
	return s.read(ctx, name, q, q.SQL(), q.Args(), fn)
}

// read runs sql (a statement reading q's layout) and calls fn with each
// row's values.
func (s *Source) read(ctx context.Context, name string, q Query, sql string, args []any, fn func(values []any) error) error {
	rows, err := s.tx.Query(ctx, sql, args...)
	if err != nil {
		return fmt.Errorf("read %s: %w", name, err)
	}
	defer rows.Close()
	// Scan (not Values): pgx plans each column's decoding once, and an
	// array is scanned into pgtype.Array to keep its dimensions. A
	// statement that failed before its first row describes no fields: its
	// error comes from rows.Err.
	width := len(rows.FieldDescriptions())
	isArray := make([]bool, width)
	arrays := 0
	for i, c := range q.Columns {
		if c.Array && i < width {
			isArray[i] = true
			arrays++
		}
	}
	dst := make([]any, width)
	var n int64
	for rows.Next() {
		vals := make([]any, width)
		var arrs []pgtype.Array[any]
		if arrays > 0 {
			arrs = make([]pgtype.Array[any], 0, arrays)
		}
		for i := range dst {
			if isArray[i] {
				arrs = append(arrs, pgtype.Array[any]{})
				dst[i] = &arrs[len(arrs)-1]
			} else {
				dst[i] = &vals[i]
			}
		}
		if err := rows.Scan(dst...); err != nil {
			return fmt.Errorf("read %s: row %d: %w", name, n+1, err)
		}
		k := 0
		for i := range dst {
			if isArray[i] {
				if arrs[k].Valid {
					vals[i] = nestArray(arrs[k])
				}
				k++
			}
		}
		if err := fn(vals); err != nil {
			return err
		}
		n++
	}
	if err := rows.Err(); err != nil {
		if ctx.Err() == nil && sessionEnded(err, s.conn) {
			return fmt.Errorf("read %s after %d rows: lost the connection to PostgreSQL: %w", name, n, err)
		}
		return fmt.Errorf("read %s after %d rows: %w", name, n, err)
	}
	return nil
}

// Images reads row images (column name → text as PostgreSQL prints the
// value; nil or absent is NULL) as Stream would read rows holding those
// values: fn gets, per image in order, one value per column of q.Columns
// (no joins, no position; arrays always NULL). Follow renders an old
// row's keys with it.
func (s *Source) Images(ctx context.Context, name string, q Query, images []map[string]*string, fn func(values []any) error) error {
	if s.tx == nil {
		return errors.New("source: Images before Begin")
	}
	var inner, unnest, names []string
	var args []any
	for _, c := range q.Columns {
		if c.Array {
			inner = append(inner, "NULL::"+typeExpr(c)+" AS "+ident(c.Name))
			continue
		}
		col := make([]*string, len(images))
		for r, img := range images {
			col[r] = img[c.Name]
		}
		args = append(args, col)
		u := fmt.Sprintf("u%d", len(args))
		unnest = append(unnest, fmt.Sprintf("$%d::text[]::%s[]", len(args), typeExpr(c)))
		names = append(names, u)
		inner = append(inner, "u."+u+" AS "+ident(c.Name))
	}
	if len(unnest) == 0 {
		return errors.New("source: Images of a source without scalar columns")
	}
	sel := make([]string, len(q.Columns))
	for i, c := range q.Columns {
		sel[i] = colExpr("src", c)
	}
	sql := fmt.Sprintf("SELECT %s FROM (SELECT %s, u.pg2dynamo_ord FROM unnest(%s) WITH ORDINALITY AS u(%s, pg2dynamo_ord)) AS src ORDER BY src.pg2dynamo_ord",
		strings.Join(sel, ", "), strings.Join(inner, ", "), strings.Join(unnest, ", "), strings.Join(names, ", "))
	return s.read(ctx, name, Query{Columns: q.Columns}, sql, args, fn)
}

// sessionEnded reports whether err ended the PostgreSQL session: the
// connection is closed, or the server sent a FATAL or PANIC error (57P01
// from pg_terminate_backend, …), which can reach pgx before the socket
// closes. The severity is field V, never localized, else field S
// (https://www.postgresql.org/docs/current/protocol-error-fields.html).
func sessionEnded(err error, conn *pgx.Conn) bool {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		sev := pe.SeverityUnlocalized
		if sev == "" {
			sev = pe.Severity
		}
		return sev == "FATAL" || sev == "PANIC"
	}
	return conn.IsClosed()
}

// nestArray returns an array's elements as nested []any, one level per
// dimension (pgtype.Array holds them flat). Lower bounds other than 1 are
// dropped: a list starts at 0.
func nestArray(arr pgtype.Array[any]) any {
	if len(arr.Dims) <= 1 {
		if arr.Elements == nil {
			return []any{}
		}
		return arr.Elements
	}
	var nest func(elems []any, dims []pgtype.ArrayDimension) []any
	nest = func(elems []any, dims []pgtype.ArrayDimension) []any {
		if len(dims) == 1 {
			return elems
		}
		n := int(dims[0].Length)
		step := len(elems) / n
		out := make([]any, n)
		for j := range out {
			out[j] = nest(elems[j*step:(j+1)*step], dims[1:])
		}
		return out
	}
	return nest(arr.Elements, arr.Dims)
}

// from renders the FROM item of a source, aliased "src".
func from(src mapping.Source) string {
	if src.IsQuery() {
		// Newlines keep a final "-- comment" from swallowing the ")".
		return "(\n" + queryText(src) + "\n) AS src"
	}
	return tableIdent(src).Sanitize() + " AS src"
}

func tableIdent(src mapping.Source) pgx.Identifier {
	if src.Schema != "" {
		return pgx.Identifier{src.Schema, src.Table}
	}
	return pgx.Identifier{src.Table}
}

// SampleParams returns up to n distinct tuples of the named columns of src
// from the snapshot, in a stable pseudo-random order (md5 of the tuple),
// for checking access patterns; each value as Stream reads its column.
func (s *Source) SampleParams(ctx context.Context, src mapping.Source, cols []string, n int) ([][]any, error) {
	if s.tx == nil {
		return nil, errors.New("source: SampleParams before Begin")
	}
	names := make([]string, len(cols))
	for i, c := range cols {
		names[i] = "src." + pgx.Identifier{c}.Sanitize()
	}
	list := strings.Join(names, ", ")
	sd, err := s.tx.Prepare(ctx, "", "SELECT "+list+" FROM "+from(src))
	if err != nil {
		return nil, fmt.Errorf("sample %s: %w", strings.Join(cols, ", "), err)
	}
	oids := make([]uint32, len(sd.Fields))
	for i, f := range sd.Fields {
		oids[i] = f.DataTypeOID
	}
	types, err := s.Catalog().types(ctx, oids)
	if err != nil {
		return nil, fmt.Errorf("sample %s: %w", strings.Join(cols, ", "), err)
	}
	outer := make([]string, len(names))
	for i, f := range sd.Fields {
		outer[i] = names[i]
		if c := types[f.DataTypeOID].column(); c.AsText {
			outer[i] = textForm(names[i], c)
		}
	}
	// A tuple with a NULL renders no key: no item can answer it.
	notNull := strings.Join(names, " IS NOT NULL AND ") + " IS NOT NULL"
	sql := fmt.Sprintf("SELECT %s FROM (SELECT DISTINCT %s FROM %s WHERE %s) AS src ORDER BY md5(ROW(%s)::text) LIMIT %d",
		strings.Join(outer, ", "), list, from(src), notNull, list, n)
	rows, err := s.tx.Query(ctx, sql)
	if err != nil {
		return nil, fmt.Errorf("sample %s: %w", strings.Join(cols, ", "), err)
	}
	defer rows.Close()
	var out [][]any
	for rows.Next() {
		v, err := rows.Values()
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}
