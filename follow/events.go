package follow

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5"

	"github.com/pg2dynamo/pg2dynamo/extract"
	"github.com/pg2dynamo/pg2dynamo/pipeline"
	"github.com/pg2dynamo/pg2dynamo/transform"
)

// What the stream says of followed tables besides rows: their descriptions
// (pgoutput's Relation message) and TRUNCATE. A follow adapts, deriving the
// affected entities again whole, or stops with one of the errors below.

// IdentityError is a followed table whose replica identity, from LSN At, no
// longer carries the old values needed to find the items to delete.
type IdentityError struct {
	Table    string
	At       pglogrepl.LSN
	Identity string
	Missing  []string
	Needs    string
}

func (e *IdentityError) Error() string {
	return fmt.Sprintf("at %s the replica identity of %s became %s, which lacks %s: the old row of a change must carry them (%s), so the changes from there on cannot say which items to delete",
		e.At, e.Table, e.Identity, strings.Join(e.Missing, ", "), e.Needs)
}

// TruncateError is a TRUNCATE of followed tables at LSN At: every item of
// their rows must go, and the stream does not say which.
type TruncateError struct {
	Tables []string
	At     pglogrepl.LSN
}

func (e *TruncateError) Error() string {
	return fmt.Sprintf("at %s a TRUNCATE emptied %s: the stream does not list the rows it removed", e.At, strings.Join(e.Tables, ", "))
}

// ShapeError is a column change of a followed table at LSN At the follow cannot
// adapt to: the mapping no longer holds (Err), or a table key could change.
type ShapeError struct {
	Table  string
	At     pglogrepl.LSN
	Change string
	Err    error
}

func (e *ShapeError) Error() string {
	if e.At == 0 {
		return fmt.Sprintf("the columns of %s changed (%s): %v", e.Table, e.Change, e.Err)
	}
	return fmt.Sprintf("at %s the columns of %s changed (%s): %v", e.At, e.Table, e.Change, e.Err)
}

func (e *ShapeError) Unwrap() error { return e.Err }

var plainName = regexp.MustCompile(`^[a-z_][a-z0-9_$]*$`)

func quote(name string) string {
	if plainName.MatchString(name) {
		return name
	}
	return pgx.Identifier{name}.Sanitize()
}

func qualified(schema, name string) string { return quote(schema) + "." + quote(name) }

// identityNames are pg_class.relreplident's values, as ALTER TABLE names them.
var identityNames = map[byte]string{'d': "DEFAULT", 'n': "NOTHING", 'f': "FULL", 'i': "USING INDEX"}

// describe checks the stream's description m of a followed table: it records
// a rename, returns the column changes ("" if none) or an *IdentityError.
func (g *Graph) describe(m *pglogrepl.RelationMessage, at pglogrepl.LSN) (changed string, err error) {
	t := g.byOID[m.RelationID]
	if t == nil {
		return "", nil
	}
	t.streamed = qualified(m.Namespace, m.RelationName)
	cols := make([]extract.RelationColumn, len(m.Columns))
	for i, c := range m.Columns {
		cols[i] = extract.RelationColumn{Name: c.Name, Type: c.DataType, Mod: c.TypeModifier}
	}
	changed = columnChanges(t, cols)
	if m.ReplicaIdentity == 'f' {
		return changed, nil
	}
	carried := map[string]bool{}
	for _, c := range m.Columns {
		if c.Flags&1 != 0 {
			carried[c.Name] = true
		}
	}
	var missing []string
	for _, c := range t.identity {
		if !carried[c] {
			missing = append(missing, c)
		}
	}
	if len(missing) > 0 {
		return "", &IdentityError{Table: qualified(t.schema, t.name), At: at,
			Identity: identityNames[m.ReplicaIdentity], Missing: missing, Needs: g.needs(t)}
	}
	return changed, nil
}

// columnChanges describes how cols differ from t's columns when the graph was
// built ("added x; dropped y; retyped z", or ""). A type modifier or collation
// change counts as retyped: prepared statements reading it would fail.
func columnChanges(t *table, cols []extract.RelationColumn) string {
	was := map[string]extract.RelationColumn{}
	for _, c := range t.rel.Columns {
		was[c.Name] = c
	}
	is := map[string]bool{}
	var added, retyped, dropped []string
	for _, c := range cols {
		is[c.Name] = true
		old, ok := was[c.Name]
		if ok && c.Collation == 0 {
			old.Collation = 0
		}
		switch {
		case !ok:
			added = append(added, c.Name)
		case old != c:
			retyped = append(retyped, c.Name)
		}
	}
	for _, c := range t.rel.Columns {
		if !is[c.Name] {
			dropped = append(dropped, c.Name)
		}
	}
	var parts []string
	for _, p := range []struct {
		what  string
		names []string
	}{{"added", added}, {"dropped", dropped}, {"retyped", retyped}} {
		if len(p.names) > 0 {
			parts = append(parts, p.what+" "+strings.Join(p.names, ", "))
		}
	}
	return strings.Join(parts, "; ")
}

// events handles what txs say of the followed tables before their changes are
// applied: it stops at a TRUNCATE or a short replica identity and adapts to
// changed columns, returning the entities to derive again whole.
func (a *Applier) events(ctx context.Context, txs []*Tx) ([]int, error) {
	var whole []int
	for _, tx := range txs {
		covered := tx.Commit < a.ExactFrom
		var truncated []string
		for _, oid := range tx.Truncated {
			if t := a.graph.byOID[oid]; t != nil {
				truncated = append(truncated, qualified(t.schema, t.name))
			}
		}
		if len(truncated) > 0 && !covered {
			return nil, &TruncateError{Tables: truncated, At: tx.Commit}
		}
		for _, m := range tx.Relations {
			what, err := a.graph.describe(m, tx.Commit)
			if covered {
				continue
			}
			if what != "" {
				more, aerr := a.adapt(ctx)
				var se *ShapeError
				if errors.As(aerr, &se) {
					se.Table, se.At, se.Change = qualified(m.Namespace, m.RelationName), tx.Commit, what
				}
				if aerr != nil {
					return nil, aerr
				}
				whole = append(whole, more...)
				_, err = a.graph.describe(m, tx.Commit)
			}
			if err != nil {
				return nil, err
			}
		}
	}
	slices.Sort(whole)
	return slices.Compact(whole), nil
}

// settle readies a window's snapshot: it locks the followed tables (no ALTER
// TABLE commits until the window ends) and checks their columns against the
// graph's, since the stream describes new columns only with a table's next
// change. A changed table adapts the graph (a *ShapeError when the mapping no
// longer fits); a dropped or renamed one is a *MissingTableError.
func (a *Applier) settle(ctx context.Context, txs []*Tx) ([]int, error) {
	var err error
	if err := a.src.Lock(ctx, a.graph.Tables()); err != nil {
		return nil, err
	}
	oids := slices.Sorted(maps.Keys(a.graph.byOID))
	rels, err := a.src.Catalog().RelationsByOID(ctx, oids)
	if err != nil {
		return nil, err
	}
	var table, change string
	for _, oid := range oids {
		t := a.graph.byOID[oid]
		// The lock found a table of its name; another OID: dropped or renamed.
		r, ok := rels[oid]
		if !ok {
			return nil, &MissingTableError{Table: qualified(t.schema, t.name),
				Err: errors.New("dropped: the table of that name now is another, whose changes the slot does not stream")}
		}
		if r.Schema != t.schema || r.Name != t.name {
			return nil, &MissingTableError{Table: qualified(t.schema, t.name), Streamed: qualified(r.Schema, r.Name),
				Err: errors.New("another table has its name now")}
		}
		if c := columnChanges(t, r.Columns); c != "" && change == "" {
			table, change = qualified(t.schema, t.name), c
		}
	}
	var whole []int
	if change != "" {
		whole, err = a.adapt(ctx)
		var se *ShapeError
		if errors.As(err, &se) {
			se.Table, se.Change = table, change+", before the stream described it"
			if len(txs) > 0 {
				se.At = txs[len(txs)-1].Commit
			}
		}
		if err != nil {
			return nil, err
		}
	}
	more, err := a.catalog(ctx, txs)
	return append(whole, more...), err
}

// catalog compares the catalog with the items' Fingerprint in the window's
// snapshot when due, returning entities to derive again or a *CatalogError.
func (a *Applier) catalog(ctx context.Context, txs []*Tx) ([]int, error) {
	var at pglogrepl.LSN
	if len(txs) > 0 {
		at = txs[len(txs)-1].Commit
	}
	// A DDL command's own record of the publication just after it: one narrowed
	// and restored between two checks is found too.
	for _, tx := range txs {
		if tx.Commit < a.ExactFrom {
			continue
		}
		for _, d := range tx.DDL {
			if p := d.publication(a.publication, a.graph); p != nil {
				if perr := a.graph.publicationProblems(*p, a.publication); perr != nil {
					perr.At, perr.Change = tx.Commit, perr.Change+" by "+d.Command
					return nil, perr
				}
			}
		}
	}
	if !a.catalogDue && !hasDDL(txs) && (a.CatalogEvery <= 0 || time.Now().Before(a.catalogAt)) {
		return nil, nil
	}
	a.catalogDue, a.catalogAt = false, time.Now().Add(a.CatalogEvery)
	fp, err := ReadFingerprint(ctx, a.src.Conn(), a.graph, a.publication)
	if err != nil {
		return nil, err
	}
	if a.Catalog == nil {
		a.Catalog = fp
		return nil, nil
	}
	v := a.graph.compare(a.Catalog, fp, a.publication)
	if v.stop != nil {
		v.stop.At = at
		return nil, v.stop
	}
	if !reflect.DeepEqual(a.Catalog, fp) {
		a.Catalog, a.catalogMoved = fp, true
	}
	if len(v.changes) > 0 && a.OnCatalog != nil {
		a.OnCatalog(v.changes, a.names(v.whole))
	}
	return v.whole, nil
}

func (a *Applier) names(idx []int) []string {
	var out []string
	for _, i := range idx {
		out = append(out, a.graph.plans[i].Entity().Name)
	}
	return out
}

// CheckCatalog reports whether the catalog, read outside any window, differs
// from the items' Fingerprint; the next window then acts on it.
func (a *Applier) CheckCatalog(ctx context.Context) (bool, error) {
	if a.Catalog == nil {
		return false, nil
	}
	fp, err := ReadFingerprint(ctx, a.src.Conn(), a.graph, a.publication)
	if err != nil {
		return false, err
	}
	if !reflect.DeepEqual(fp, a.Catalog) {
		a.catalogDue = true
	}
	return a.catalogDue, nil
}

// adapt compiles the mapping against the catalog now and follows with the new
// plans, returning the entities whose items read differently, or a
// *ShapeError. It first drops the prepared statements: one reading a retyped
// column keeps its text, and PostgreSQL would refuse to run it.
func (a *Applier) adapt(ctx context.Context) ([]int, error) {
	if err := a.src.ForgetStatements(ctx); err != nil {
		return nil, err
	}
	plans, err := pipeline.Prepare(ctx, a.src, a.m)
	if err != nil {
		return nil, &ShapeError{Err: err}
	}
	g, err := NewGraph(ctx, a.src.Conn(), a.m, plans)
	if err == nil {
		err = g.CheckGenerated(ctx, a.src.Conn(), a.m)
	}
	if err != nil {
		return nil, &ShapeError{Err: err}
	}
	whole := a.differ(plans)
	for _, i := range whole {
		if a.graph.plans[i].Shape().Keys != plans[i].Shape().Keys {
			return nil, &ShapeError{Err: fmt.Errorf("the table keys of %s could render differently for the same rows (a key column's type changed)", plans[i].Entity().Name)}
		}
	}
	for k, t := range g.byOID {
		if old := a.graph.byOID[k]; old != nil {
			t.streamed = old.streamed
		}
	}
	a.graph = g
	return whole, nil
}

func (a *Applier) differ(plans []*transform.Plan) []int {
	var out []int
	for i, p := range plans {
		if !p.Shape().Same(a.graph.plans[i].Shape()) {
			out = append(out, i)
		}
	}
	return out
}

// Shapes are the plans' shapes by entity name, as a checkpoint records them.
func (a *Applier) Shapes() map[string]transform.Shape {
	out := map[string]transform.Shape{}
	for _, p := range a.graph.plans {
		out[p.Entity().Name] = p.Shape()
	}
	return out
}

// stale returns the entities whose recorded shapes differ from a's plans.
func (a *Applier) stale(recorded map[string]transform.Shape) ([]int, error) {
	var out []int
	for i, p := range a.graph.plans {
		r, ok := recorded[p.Entity().Name]
		if !ok || r.Same(p.Shape()) {
			continue
		}
		if r.Keys != p.Shape().Keys {
			return nil, &ShapeError{Table: p.Entity().Name, Change: "since the items were written", Err: fmt.Errorf("the table keys of %s could render differently for the same rows (a key column's type changed)", p.Entity().Name)}
		}
		out = append(out, i)
	}
	return slices.Clip(out), nil
}
