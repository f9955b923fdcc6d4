// Package extract reads entities' rows from PostgreSQL with pgx, all in one
// read-only REPEATABLE READ snapshot.
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

// DefaultConnectTimeout bounds connecting when no connect_timeout is set.
const DefaultConnectTimeout = 10 * time.Second

// Source is one connection to the source database; not safe for concurrent use.
type Source struct {
	conn *pgx.Conn
	cfg  *pgx.ConnConfig
	tx   pgx.Tx
	name string
	// snapshot is the ID exported from tx by ExportSnapshot.
	snapshot string
}

// Connect opens a connection (a URL, keyword/value, or "" for the libpq
// environment), pinned to SessionSettings; errors never hold the password.
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

// Name is "postgres://user@host:port/database", without the password.
func (s *Source) Name() string { return s.name }

// Conn returns the underlying connection.
func (s *Source) Conn() *pgx.Conn { return s.conn }

// ForgetStatements drops pgx's prepared statements: PostgreSQL refuses one
// whose column was retyped (SQLSTATE 0A000). Call it after catalog changes.
// https://www.postgresql.org/docs/current/sql-deallocate.html
func (s *Source) ForgetStatements(ctx context.Context) error {
	if err := s.conn.DeallocateAll(ctx); err != nil {
		return fmt.Errorf("drop the prepared statements: %w", err)
	}
	return nil
}

// Catalog returns the connection's catalog reader (in the snapshot once begun).
func (s *Source) Catalog() Catalog { return NewCatalog(s.conn) }

// Close ends the snapshot, if any, and closes the connection.
func (s *Source) Close(ctx context.Context) error {
	_ = s.End(ctx)
	return s.conn.Close(ctx)
}

// End rolls back the snapshot transaction begun by Begin, if any.
func (s *Source) End(ctx context.Context) error {
	if s.tx == nil {
		return nil
	}
	err := s.tx.Rollback(ctx)
	s.tx, s.snapshot = nil, ""
	return err
}

// Begin starts the read-only REPEATABLE READ transaction later reads share.
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

// Lock takes ACCESS SHARE locks on tables until End, so ALTER and DROP TABLE
// wait; taken before any read, the snapshot's catalog matches the planner's.
// A missing table is SQLSTATE 42P01.
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

// BeginAt is Begin on a snapshot another session exported and keeps alive
// until every fork has begun (a slot's session: by running no other command).
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

// ExportSnapshot exports Begin's snapshot; its ID is importable until End.
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

// Fork opens another connection with the same settings reading in s's
// snapshot; close it when done. s must stay open until every fork has begun.
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
		// SET takes no parameters: the ID (PostgreSQL's own hex and dashes) is
		// quoted as a literal all the same.
		_, err = tx.Exec(ctx, "SET TRANSACTION SNAPSHOT '"+strings.ReplaceAll(id, "'", "''")+"'")
	}
	if err != nil {
		conn.Close(ctx)
		return nil, fmt.Errorf("import snapshot %s: %w", id, err)
	}
	f.tx = tx
	return f, nil
}

// Positions returns the positions of q's (ordered) rows numbered at, from 1
// within After and Until, nil past the last, in one row_number() statement.
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
	// The LIMIT lets the executor stop at the last row asked for.
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
		if err := rows.Scan(textPtrs([]any{&n}, vals)...); err != nil {
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

// CanonicalPosition reads pos through each OrderBy column's input and output
// functions: what Query.Position gives for those values. ok is false when
// pos has the wrong length or an input function refuses it.
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
	// Not pgx's nested transaction: it never releases the savepoint, and
	// pg_export_snapshot refuses to run in a subtransaction.
	if _, err := s.tx.Exec(ctx, "SAVEPOINT pg2dynamo_position"); err != nil {
		return nil, false, fmt.Errorf("read position: %w", err)
	}
	canon = make([]string, len(pos))
	err = s.tx.QueryRow(ctx, "SELECT "+strings.Join(sel, ", "), args...).Scan(textPtrs(nil, canon)...)
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
	// Type is the (element) type name, pg_type.typname: "int4", "jsonb", …
	Type string
	// Array is true for an array column.
	Array bool
	// Dims is an array's declared dimensions (attndims), 0 when unknown.
	Dims int
	// AsText is true for columns read as text (json, enums, non-native types).
	AsText bool
	// Delim is an array's text delimiter (pg_type.typdelim), 0 when unknown.
	Delim byte
	// IntDigits is p−s for numeric(p,s), else 0.
	IntDigits int
	// Precision and Scale are p and s of numeric(p,s) (0, 0 when undeclared).
	Precision, Scale int
	// PrimaryKey marks a table source's primary key columns (naming rejects).
	PrimaryKey bool
	// KeyPos is the column's 1-based position in the primary key, else 0.
	KeyPos int
}

// nativeTypes are read in binary and converted by transform; others as text.
var nativeTypes = map[string]bool{
	"int2": true, "int4": true, "int8": true, "numeric": true,
	"float4": true, "float8": true,
	"text": true, "varchar": true, "bpchar": true, "name": true,
	"uuid": true, "bool": true, "bytea": true,
	"date": true, "timestamp": true, "timestamptz": true,
}

// Describe returns e's source columns without reading a row; an unknown table
// or a rejected query is a *mapping.Error at the entity's source.
func (s *Source) Describe(ctx context.Context, m *mapping.Mapping, e *mapping.Entity) ([]Column, error) {
	return s.DescribeSource(ctx, m, mapping.Path(mapping.KeyEntities, e.Name, mapping.KeySource), e.Source)
}

// relationHint is a "did you mean" for src's table in its schema, or "".
func (s *Source) relationHint(ctx context.Context, src mapping.Source) string {
	names, err := s.Catalog().RelationNames(ctx, src.Schema)
	if err != nil {
		return ""
	}
	return suggest.Hint(src.Table, names)
}

// DescribeSource returns the columns of src, named at path in the mapping.
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
	types, err := s.Catalog().types(ctx, sd.Fields)
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

// UniqueKeys returns a table source's primary key (first) and other plain
// unique indexes; none for a view or a query.
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

// CountRange returns the number of rows q reads in the snapshot (After, Until).
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

// Stream reads q's rows from the snapshot and calls fn with each row's values
// (q.Columns, then each join's; nil for NULL, arrays nested); fn must not keep
// the slice. PostgreSQL's errors are wrapped with name and the rows read.
func (s *Source) Stream(ctx context.Context, name string, q Query, fn func(values []any) error) error {
	if s.tx == nil {
		return errors.New("source: Stream before Begin")
	}
	return s.read(ctx, name, q, q.SQL(), q.Args(), fn)
}

func (s *Source) read(ctx context.Context, name string, q Query, sql string, args []any, fn func(values []any) error) error {
	rows, err := s.tx.Query(ctx, sql, args...)
	if err != nil {
		return fmt.Errorf("read %s: %w", name, err)
	}
	defer rows.Close()
	// Scan: pgx plans decoding once and arrays keep their dimensions. A
	// statement failing before its first row has no fields: rows.Err has it.
	width := len(rows.FieldDescriptions())
	isArray, embeds := q.layout(width)
	arrays := 0
	for _, a := range isArray {
		if a {
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
		for _, e := range embeds {
			if err := e.nest(vals[e.at]); err != nil {
				return fmt.Errorf("read %s: row %d: %w", name, n+1, err)
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

// Images reads row images (column → text; nil or absent is NULL) as Stream
// would read rows of those values, q.Columns only: follow renders old keys so.
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
		if c.AsText {
			// The image is the type's output text already, which is what a
			// column read as text reads; cast to the type, a value its type
			// has since lost (an enum label renamed) would fail.
			unnest = append(unnest, fmt.Sprintf("$%d::text[]", len(args)))
		} else {
			unnest = append(unnest, fmt.Sprintf("$%d::text[]::%s[]", len(args), typeExpr(c)))
		}
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

// sessionEnded reports whether err ended the session: the connection closed,
// or a FATAL or PANIC, which may arrive before the socket closes.
// https://www.postgresql.org/docs/current/protocol-error-fields.html
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

// nestArray nests an array's flat elements per dimension, from index 0.
// layout marks which of a row's width values are arrays (q.Columns', a
// duplicate's), and lists the embeds whose records hold arrays.
func (q Query) layout(width int) ([]bool, []embedArrays) {
	isArray := make([]bool, width)
	at := 0
	mark := func(cols []Column) {
		for _, c := range cols {
			if c.Array && at < width {
				isArray[at] = true
			}
			at++
		}
	}
	mark(q.Columns)
	var embeds []embedArrays
	for _, j := range q.Joins {
		switch j.Kind {
		case JoinParent:
			mark(j.Columns)
			continue
		case JoinEmbed:
			if e := (embedArrays{at: at, fields: len(j.Columns)}); e.find(j.Columns) {
				embeds = append(embeds, e)
			}
		}
		at += j.Width()
	}
	return isArray, embeds
}

// embedArrays re-nests the array fields of an embed's records, which a record
// decodes flat: each record ends with array_dims of each (Query.SQL).
type embedArrays struct {
	at     int   // the records' value in a row
	fields int   // the record's columns, before the dimensions
	arrays []int // the array columns' fields
}

func (e *embedArrays) find(cols []Column) bool {
	for f, c := range cols {
		if c.Array && !c.AsText {
			e.arrays = append(e.arrays, f)
		}
	}
	return len(e.arrays) > 0
}

// nest re-nests each record of items ([]any of []any), dimensions dropped.
func (e embedArrays) nest(items any) error {
	records, _ := items.([]any)
	for r, rec := range records {
		fields, ok := rec.([]any)
		if !ok || len(fields) != e.fields+len(e.arrays) {
			return fmt.Errorf("embed record %d: %d fields, want %d", r+1, len(fields), e.fields+len(e.arrays))
		}
		for k, f := range e.arrays {
			text, _ := fields[e.fields+k].(string)
			if flat, ok := fields[f].([]any); ok && strings.Count(text, "[") > 1 {
				dims, err := parseDims(text)
				if err != nil {
					return err
				}
				fields[f] = nestArray(pgtype.Array[any]{Elements: flat, Dims: dims, Valid: true})
			}
		}
		records[r] = fields[:e.fields]
	}
	return nil
}

// parseDims parses array_dims' text, "[1:2][0:2]".
// https://www.postgresql.org/docs/current/functions-array.html
func parseDims(text string) ([]pgtype.ArrayDimension, error) {
	var dims []pgtype.ArrayDimension
	for _, d := range strings.Split(strings.TrimPrefix(text, "["), "[") {
		var lo, hi int32
		if _, err := fmt.Sscanf(d, "%d:%d]", &lo, &hi); err != nil {
			return nil, fmt.Errorf("array_dims %q: %w", text, err)
		}
		dims = append(dims, pgtype.ArrayDimension{Length: hi - lo + 1, LowerBound: lo})
	}
	return dims, nil
}

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

// SampleParams returns up to n distinct tuples of cols, in pseudo-random order.
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
	types, err := s.Catalog().types(ctx, sd.Fields)
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
