package draft

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"
)

// Suggestion is a relation no foreign key declares, suggested by a
// column's name: the column is named as another table's one-column key
// (customer_id, and a table customer keyed by customer_id; part_num and
// parts keyed by part_num), or after that table with _id when the key is
// id (customer_id, and customer keyed by id), and the two have one type.
type Suggestion struct {
	Column string
	Parent *Table
	// RefColumn is the parent's key column.
	RefColumn string
	// Values are the distinct values of Column, NULLs aside; Orphans
	// those that no parent row has (measured).
	Values, Orphans int64
	// FK is the relation drafted as a foreign key, when every value has a
	// parent row; nil otherwise, and the draft only names it.
	FK *ForeignKey
	// Partial is true for a foreign key of a partitioned table that only
	// some of its partitions declare (Pagila's payment): suggested by
	// those declarations rather than by the column's name.
	Partial bool
}

// suggestRelations measures, for each column of each table that no
// foreign key of the table holds, the relation its name suggests (see
// Suggestion), in the snapshot of tx. One whose values all have a parent
// row is added to the table's foreign keys, marked suggested, so that the
// rules use it as a declared one; the others are noted on the table.
func suggestRelations(ctx context.Context, tx pgx.Tx, cat *Catalog) error {
	for _, t := range cat.Tables {
		if err := suggestPartial(ctx, tx, cat, t); err != nil {
			return err
		}
		for _, c := range t.Columns {
			if slices.ContainsFunc(t.ForeignKeys, func(fk *ForeignKey) bool { return slices.Contains(fk.Columns, c.Name) }) {
				continue
			}
			p, ref := suggestedParent(cat, t, c)
			if p == nil {
				continue
			}
			s := &Suggestion{Column: c.Name, Parent: p, RefColumn: ref}
			fk := &ForeignKey{Name: "suggested: " + c.Name, Columns: []string{c.Name}, RefSchema: p.Schema, RefTable: p.Name,
				RefColumns: []string{ref}, columnsNotNull: c.NotNull, valid: true, suggested: s}
			if err := measureSuggestion(ctx, tx, t, s, fk); err != nil {
				return fmt.Errorf("measuring %s.%s as a reference to %s: %w", t.Ident(), c.Name, p.Ident(), err)
			}
			s.Values = fk.Fanout.Parents
			if s.Orphans == 0 && fk.Fanout.Children > 0 {
				s.FK = fk
				t.ForeignKeys = append(t.ForeignKeys, fk)
			}
			t.Suggestions = append(t.Suggestions, s)
		}
	}
	return nil
}

// suggestPartial measures each one-column foreign key of t that only
// some of its partitions declare (not usable as it is: rows of the other
// partitions may have no parent) as a suggestion: drafted as a foreign
// key, marked, when every value has a parent row in the snapshot.
func suggestPartial(ctx context.Context, tx pgx.Tx, cat *Catalog, t *Table) error {
	for _, fk := range t.ForeignKeys {
		p := cat.Table(fk.RefSchema, fk.RefTable)
		if !fk.partial || !fk.valid || len(fk.Columns) != 1 || p == nil {
			continue
		}
		s := &Suggestion{Column: fk.Columns[0], Parent: p, RefColumn: fk.RefColumns[0], Partial: true}
		if err := measureSuggestion(ctx, tx, t, s, fk); err != nil {
			return fmt.Errorf("measuring %s.%s as a reference to %s: %w", t.Ident(), s.Column, p.Ident(), err)
		}
		s.Values = fk.Fanout.Parents
		if s.Orphans == 0 && fk.Fanout.Children > 0 {
			s.FK, fk.partial, fk.suggested = fk, false, s
		}
		t.Suggestions = append(t.Suggestions, s)
	}
	return nil
}

// suggestedParent is the table, other than t, whose one-column identity
// key column c's name points to, and that key column; nil when none or
// several do.
func suggestedParent(cat *Catalog, t *Table, c Column) (*Table, string) {
	var found *Table
	var ref string
	name := strings.ToLower(c.Name)
	for _, p := range cat.Tables {
		key, _ := identity(p)
		if p == t || len(key) != 1 {
			continue
		}
		k := strings.ToLower(key[0])
		base := singularSnake(asciiSnake(p.Name))
		named := name == k && strings.HasPrefix(k, base) || k == "id" && name == base+"_id"
		kc, _ := p.Column(key[0])
		same := kc.Type == c.Type || slices.Contains(integerTypes, kc.Type) && slices.Contains(integerTypes, c.Type)
		if named && same && base != "" {
			if found != nil {
				return nil, ""
			}
			found, ref = p, key[0]
		}
	}
	return found, ref
}

// measureSuggestion measures fk's fan-out, as measure does a declared
// foreign key's, and the values without a parent row.
func measureSuggestion(ctx context.Context, tx pgx.Tx, t *Table, s *Suggestion, fk *ForeignKey) error {
	col, ref := pgx.Identifier{s.Column}.Sanitize(), pgx.Identifier{s.RefColumn}.Sanitize()
	q := fmt.Sprintf(`SELECT coalesce(sum(g.n), 0)::bigint, count(*), coalesce(max(g.n), 0),
  count(*) FILTER (WHERE NOT EXISTS (SELECT 1 FROM %s AS p WHERE p.%s = g.v))
FROM (SELECT %s AS v, count(*) AS n FROM %s WHERE %s IS NOT NULL GROUP BY %s) AS g`,
		s.Parent.Ident(), ref, col, t.Ident(), col, col)
	return tx.QueryRow(ctx, q).Scan(&fk.Fanout.Children, &fk.Fanout.Parents, &fk.Fanout.Max, &s.Orphans)
}

// evidence says why s was suggested and what the data shows, and how to
// declare it.
func (s *Suggestion) evidence(t *Table) string {
	decl := fmt.Sprintf("ALTER TABLE %s ADD FOREIGN KEY (%s) REFERENCES %s (%s)", t.Ident(), pgx.Identifier{s.Column}.Sanitize(),
		s.Parent.Ident(), pgx.Identifier{s.RefColumn}.Sanitize())
	rel := fmt.Sprintf("%s → %s (%s)", s.Column, s.Parent.Name, s.RefColumn)
	if s.Partial {
		if s.FK == nil {
			return fmt.Sprintf("Foreign key declared by some partitions only, not drafted: %s: %s of its %s distinct values have no %s row; fix those rows and declare it on the table (%s) to draft with it.",
				rel, count(s.Orphans), count(s.Values), singular(s.Parent.Name), decl)
		}
		return fmt.Sprintf("Foreign key declared by some partitions only, drafted as one: %s: rows of the other partitions could have no parent, but each of its %s distinct values has a %s row; declare it on the table (%s) to keep it so.",
			rel, count(s.Values), singular(s.Parent.Name), decl)
	}
	how := fmt.Sprintf("named as %s's key %s", s.Parent.Name, s.RefColumn)
	if s.RefColumn == "id" {
		how = fmt.Sprintf("named after %s, keyed by id", s.Parent.Name)
	}
	if s.FK == nil {
		return fmt.Sprintf("Suggested relation, not drafted: %s: %s, of its type, but %s of its %s distinct values have no %s row; fix those rows and declare it (%s) to draft with it.",
			rel, how, count(s.Orphans), count(s.Values), singular(s.Parent.Name), decl)
	}
	return fmt.Sprintf("Suggested relation, drafted as a foreign key: %s: no foreign key declares it, but the column is %s, of its type, and each of its %s distinct values has a %s row; declare it (%s) to keep it so.",
		rel, how, count(s.Values), singular(s.Parent.Name), decl)
}
