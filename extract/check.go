package extract

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/pg2dynamo/pg2dynamo/mapping"
)

// These checks have PostgreSQL plan (never run) what pg2dynamo will run, so a
// read's problem is a mapping error found before anything is created.

// CheckQuerySource checks query source src, named at path, for what Describe's
// prepare cannot show: not one complete statement, parameters, or row locks
// (refused read-only but not by EXPLAIN: the plan is searched for LockRows).
// Those are *mapping.Errors at path's "query"; tables are not checked.
func (s *Source) CheckQuerySource(ctx context.Context, m *mapping.Mapping, path string, src mapping.Source) error {
	if !src.IsQuery() {
		return nil
	}
	qpath := mapping.Path(path, mapping.KeyQuery)
	text := queryText(src)
	// A refused statement aborts the read-only transaction, never s's snapshot.
	var problem string
	err := s.readOnly(ctx, func(tx pgx.Tx) error {
		sd, err := tx.Prepare(ctx, "", text)
		var pe *pgconn.PgError
		if errors.As(err, &pe) {
			problem = fmt.Sprintf("the query is not one complete statement on its own: %s (SQLSTATE %s); "+
				"pg2dynamo reads it as a subquery, FROM (query) AS src, which a parenthesis it closes would change", pe.Message, pe.Code)
			return nil
		}
		if err != nil {
			return err
		}
		if n := len(sd.ParamOIDs); n > 0 {
			params := make([]string, n)
			for i := range params {
				params[i] = fmt.Sprintf("$%d", i+1)
			}
			noun := "parameters"
			if n == 1 {
				noun = "parameter"
			}
			problem = fmt.Sprintf("the query has %d %s (%s): nothing supplies a value; write the value into the query",
				n, noun, strings.Join(params, ", "))
			return nil
		}
		locks, err := planHas(ctx, tx, text, nil, "LockRows")
		switch {
		case errors.As(err, &pe):
			problem = fmt.Sprintf("PostgreSQL cannot plan the query: %s (SQLSTATE %s)", pe.Message, pe.Code)
		case err != nil:
			return err
		case locks:
			problem = "the query locks rows (FOR UPDATE, FOR SHARE or a like clause): pg2dynamo reads in a " +
				"read-only transaction, where PostgreSQL refuses locks, and its snapshot needs none: remove the locking clause"
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("check %s: %w", qpath, err)
	}
	if problem != "" {
		return m.Errorf(qpath, "%s", problem)
	}
	return nil
}

// CheckRead has PostgreSQL plan Count's and Stream's statements for e and q.
// One it cannot plan is a *mapping.Error at the entity (or its query); other
// errors are returned wrapped.
func (s *Source) CheckRead(ctx context.Context, m *mapping.Mapping, e *mapping.Entity, q Query) error {
	path := mapping.Path(mapping.KeyEntities, e.Name)
	if e.Source.IsQuery() {
		path = mapping.Path(path, mapping.KeySource, mapping.KeyQuery)
	}
	stmts := []struct {
		what, sql string
		args      []any
	}{
		{"its row count", countSQL(e.Source), nil},
		{"its rows", q.SQL(), q.Args()},
	}
	for _, st := range stmts {
		err := s.readOnly(ctx, func(tx pgx.Tx) error {
			_, err := planHas(ctx, tx, st.sql, st.args, "")
			return err
		})
		var pe *pgconn.PgError
		switch {
		case errors.As(err, &pe):
			return m.Errorf(path, "PostgreSQL cannot plan the read of %s: %s (SQLSTATE %s)", st.what, pe.Message, pe.Code)
		case err != nil:
			return fmt.Errorf("check the read of %s: %w", e.Name, err)
		}
	}
	return nil
}

// readOnly runs fn in a rolled-back read-only transaction (or savepoint).
func (s *Source) readOnly(ctx context.Context, fn func(pgx.Tx) error) error {
	var tx pgx.Tx
	var err error
	if s.tx != nil {
		tx, err = s.tx.Begin(ctx)
	} else {
		tx, err = s.conn.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	}
	if err != nil {
		return err
	}
	err = fn(tx)
	if rerr := tx.Rollback(ctx); err == nil && rerr != nil {
		err = rerr
	}
	return err
}

// planHas plans sql with EXPLAIN and reports whether node is in the plan.
func planHas(ctx context.Context, tx pgx.Tx, sql string, args []any, node string) (bool, error) {
	var out string
	if err := tx.QueryRow(ctx, "EXPLAIN (FORMAT JSON) "+sql, args...).Scan(&out); err != nil {
		return false, err
	}
	if node == "" {
		return false, nil
	}
	type plan struct {
		NodeType string `json:"Node Type"`
		Plans    []plan `json:"Plans"`
	}
	var doc []struct {
		Plan plan `json:"Plan"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		return false, fmt.Errorf("read EXPLAIN's plan: %w", err)
	}
	var has func(p plan) bool
	has = func(p plan) bool {
		if p.NodeType == node {
			return true
		}
		for _, c := range p.Plans {
			if has(c) {
				return true
			}
		}
		return false
	}
	for _, d := range doc {
		if has(d.Plan) {
			return true, nil
		}
	}
	return false, nil
}

// queryText is a query's text, trimmed of space and a final semicolon.
func queryText(src mapping.Source) string {
	return strings.TrimRight(strings.TrimSpace(src.Query), "; \t\r\n")
}

func countSQL(src mapping.Source) string { return "SELECT count(*) FROM " + from(src) }
