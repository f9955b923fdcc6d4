package follow

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5"

	"github.com/pg2dynamo/pg2dynamo/extract"
)

// What the catalog alone says of the followed tables. Some changes reach
// an item without any row change in the WAL, so the stream never carries
// them: an enum label renamed (ALTER TYPE … RENAME VALUE), a table
// rewritten with new values of the same type (ALTER TABLE … ALTER COLUMN
// … TYPE … USING), a partition attached with its rows or detached with
// them, and the publication narrowed (a row filter, a column list, a kind
// of change no longer published, a table taken out), after which pgoutput
// leaves changes out. A follow reads a Fingerprint of all that at start,
// when a DDL command is met in the stream (ddl.go) and at commit
// boundaries every CatalogInterval at most, and compares it with the
// last: each difference is derived again (Applier.catalog) or stops the
// follow with a *CatalogError that names it.

// Fingerprint is the part of the source's catalog that decides what a
// followed table's items hold, other than its rows: per table, its
// columns (type with modifiers, generation expression, enum labels), its
// storage (the relfilenode of each leaf: a rewrite changes it) and its
// partitions with their bounds; and the publication (which kinds of
// change it publishes, which followed tables, with which row filter and
// column list). It is JSON in a checkpoint (Checkpoint.Catalog), so that
// a change made while no follow ran is found at the next start.
type Fingerprint struct {
	// Tables are the followed tables by OID.
	Tables map[uint32]*TablePrint `json:"tables"`
	// Publication is the follow's publication.
	Publication PublicationPrint `json:"publication"`
}

// TablePrint is a followed table's part of a Fingerprint.
type TablePrint struct {
	// Name is schema.name, quoted where SQL needs it, at the time read.
	Name string `json:"name"`
	// Columns are by name (dropped columns left out).
	Columns map[string]ColumnPrint `json:"columns"`
	// Storage is, per leaf (the table itself, or each partition of a
	// partitioned one), "name:relfilenode", sorted.
	Storage []string `json:"storage"`
	// Partitions are "name bound" of every partition below the table,
	// sorted (pg_get_expr of relpartbound).
	Partitions []string `json:"partitions,omitempty"`
}

// ColumnPrint is one column of a TablePrint.
type ColumnPrint struct {
	// Type is format_type(atttypid, atttypmod): "character varying(20)".
	Type string `json:"type"`
	// Generated is the expression of a STORED generated column.
	Generated string `json:"generated,omitempty"`
	// Enum are the labels, in their sort order, of the enum the column
	// holds (directly, as a domain's base or as an array's element).
	Enum []string `json:"enum,omitempty"`
}

// PublicationPrint is the publication's part of a Fingerprint
// (pg_publication, pg_publication_tables, pg_publication_rel).
// https://www.postgresql.org/docs/current/catalog-pg-publication.html
type PublicationPrint struct {
	Exists                           bool `json:"exists"`
	Insert, Update, Delete, Truncate bool
	ViaRoot                          bool `json:"via_root"`
	// Tables are the followed tables it publishes, by OID, each with its
	// row filter and column list ("" when none; PostgreSQL 15 and later).
	Tables map[uint32]PublishedTable `json:"tables"`
}

// PublishedTable is a followed table as a publication publishes it.
type PublishedTable struct {
	RowFilter string `json:"row_filter,omitempty"`
	Columns   string `json:"columns,omitempty"`
}

// CatalogInterval is the longest a follow streams without comparing the
// catalog with its last Fingerprint while it applies changes or idles (a
// DDL command met in the stream is compared at once).
const CatalogInterval = 2 * time.Second

// ReadFingerprint reads the Fingerprint of g's tables and publication pub
// through q (in a window's snapshot, or on a plain connection). A table
// dropped is absent from Tables.
func ReadFingerprint(ctx context.Context, q extract.Querier, g *Graph, pub string) (*Fingerprint, error) {
	oids := slices.Sorted(maps.Keys(g.byOID))
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
	if err := readPublicationPrint(ctx, q, pub, oids, &fp.Publication); err != nil {
		return nil, err
	}
	return fp, nil
}

// readPublicationPrint reads pub's part of a Fingerprint for the tables
// oids.
func readPublicationPrint(ctx context.Context, q extract.Querier, pub string, oids []uint32, p *PublicationPrint) error {
	err := q.QueryRow(ctx, "SELECT pubinsert, pubupdate, pubdelete, pubtruncate, pubviaroot FROM pg_catalog.pg_publication WHERE pubname = $1",
		pub).Scan(&p.Insert, &p.Update, &p.Delete, &p.Truncate, &p.ViaRoot)
	if err == pgx.ErrNoRows {
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

// CatalogError is a change of the source's catalog, found at or before
// LSN At, that the follow cannot derive its way out of: the items it
// leaves wrong cannot be found from the stream (Why). Publication is set
// when the change is the publication's (changes from there on were left
// out of the stream); Fix is then the statements that publish them again.
type CatalogError struct {
	At          pglogrepl.LSN
	Change, Why string
	Publication bool
	Fix         []string
	// WhileStopped is set when the change was made while no follow ran
	// (found against the checkpoint's Fingerprint at start).
	WhileStopped bool
}

func (e *CatalogError) Error() string {
	when := fmt.Sprintf("at %s", e.At)
	if e.WhileStopped {
		when = "while no follow ran"
	} else if e.At == 0 {
		when = "under the follow"
	}
	return fmt.Sprintf("%s %s: %s", when, e.Change, e.Why)
}

// catalogVerdict is what a difference between two Fingerprints asks of a
// follow: the entities (plan indexes) to derive again whole, and the
// changes it cannot derive its way out of.
type catalogVerdict struct {
	whole   []int
	changes []string // described, for the log
	stop    *CatalogError
}

// CompareCatalog compares was, a checkpoint's Fingerprint, with is, the
// catalog now, for a follow that resumes: it returns the changes it can
// derive its way out of, described, and the entities to derive again
// whole for them (Applier.Rederive), or a *CatalogError (WhileStopped).
func (g *Graph) CompareCatalog(was, is *Fingerprint, pub string) (changes, entities []string, err error) {
	v := g.compare(was, is, pub)
	if v.stop != nil {
		v.stop.WhileStopped = true
		return nil, nil, v.stop
	}
	for _, i := range v.whole {
		entities = append(entities, g.plans[i].Entity().Name)
	}
	return v.changes, entities, nil
}

// compare returns what the differences from was to is ask of a follow of
// g streaming publication pub. Column changes the stream describes
// (added, dropped, retyped: Graph.describe and Applier.settle) are left
// to them; a table dropped to Applier.dropped.
func (g *Graph) compare(was, is *Fingerprint, pub string) catalogVerdict {
	var v catalogVerdict
	if p := g.publicationProblems(is.Publication, pub); p != nil {
		v.stop = p
		return v
	}
	for _, oid := range slices.Sorted(maps.Keys(g.byOID)) {
		t := g.byOID[oid]
		old, now := was.Tables[oid], is.Tables[oid]
		if old == nil || now == nil {
			continue
		}
		name := qualified(t.schema, t.name)
		var stop []string
		rederive := false
		// A partition detached takes its rows, and their items stay.
		var detached, attached []string
		for _, p := range old.Partitions {
			if !slices.Contains(now.Partitions, p) {
				detached = append(detached, p)
			}
		}
		for _, p := range now.Partitions {
			if !slices.Contains(old.Partitions, p) {
				attached = append(attached, p)
			}
		}
		if len(attached) > 0 {
			v.changes = append(v.changes, fmt.Sprintf("partitions attached to %s (%s)", name, strings.Join(attached, "; ")))
			rederive = true
		}
		if len(detached) > 0 {
			if g.ownsItems(t) {
				stop = append(stop, fmt.Sprintf("partitions detached from %s (%s): the items of their rows stay in the table, and the stream does not list those rows", name, strings.Join(detached, "; ")))
			} else {
				v.changes = append(v.changes, fmt.Sprintf("partitions detached from %s (%s)", name, strings.Join(detached, "; ")))
				rederive = true
			}
		}
		var renamedEnums, regenerated []string
		for _, c := range slices.Sorted(maps.Keys(now.Columns)) {
			oc, ok := old.Columns[c]
			nc := now.Columns[c]
			if !ok || oc.Type != nc.Type {
				continue // added or retyped: the stream's description
			}
			if lost := lostLabels(oc.Enum, nc.Enum); len(lost) > 0 {
				if slices.Contains(t.identity, c) {
					stop = append(stop, fmt.Sprintf("the enum labels %s of %s.%s were renamed or reordered, and the column is one the items' keys or joins are built from: their items would move, and the stream does not list them", strings.Join(lost, ", "), name, c))
				} else {
					renamedEnums = append(renamedEnums, fmt.Sprintf("%s.%s (%s)", name, c, strings.Join(lost, ", ")))
				}
			}
			if oc.Generated != nc.Generated {
				regenerated = append(regenerated, name+"."+c)
			}
		}
		if len(renamedEnums) > 0 {
			v.changes = append(v.changes, "enum labels renamed in "+strings.Join(renamedEnums, ", "))
			rederive = true
		}
		if len(regenerated) > 0 {
			v.changes = append(v.changes, "generation expressions changed: "+strings.Join(regenerated, ", "))
			rederive = true
		}
		if !slices.Equal(old.Storage, now.Storage) && len(detached) == 0 && len(attached) == 0 {
			// Rewritten: ALTER TABLE … TYPE … USING (the rewritten
			// column's values may change, the others are copied as they
			// are), VACUUM FULL, CLUSTER. A retype the stream describes
			// is derived again through it; the rest here.
			v.changes = append(v.changes, fmt.Sprintf("%s rewritten (ALTER TABLE … USING, VACUUM FULL or CLUSTER)", name))
			rederive = true
		}
		if len(stop) > 0 {
			v.stop = &CatalogError{Change: strings.Join(stop, "; "), Why: "the follow cannot tell which items to delete"}
			return v
		}
		if rederive {
			for _, e := range t.effects {
				v.whole = append(v.whole, e.entity)
			}
		}
	}
	slices.Sort(v.whole)
	v.whole = slices.Compact(v.whole)
	return v
}

// CheckPublication returns a *CatalogError when fp's publication pub
// leaves out changes of g's tables (see publicationProblems).
func (g *Graph) CheckPublication(fp *Fingerprint, pub string) error {
	if p := g.publicationProblems(fp.Publication, pub); p != nil {
		return p
	}
	return nil
}

// ownsItems reports whether t is an entity's own source: its rows are
// items (a row gone takes an item with it), not only embedded, counted or
// duplicated into other rows' items.
func (g *Graph) ownsItems(t *table) bool {
	return slices.ContainsFunc(t.effects, func(e effect) bool { return e.kind == own })
}

// lostLabels returns the labels of was that is lacks or holds at another
// place in the sort order: a rename (ALTER TYPE … RENAME VALUE) or a
// reorder. Labels added (ADD VALUE) change no row.
func lostLabels(was, is []string) []string {
	var out []string
	j := 0
	for _, l := range was {
		i := slices.Index(is, l)
		if i < j {
			out = append(out, l)
			continue
		}
		j = i + 1
	}
	return out
}

// publicationProblems returns a *CatalogError when p (publication pub)
// leaves out changes of g's tables: it is gone, does not publish a kind of
// change, via the partition root where a table is partitioned, or every
// followed table whole (no row filter, no column list).
func (g *Graph) publicationProblems(p PublicationPrint, pub string) *CatalogError {
	if !p.Exists {
		return &CatalogError{Publication: true, Change: fmt.Sprintf("publication %s was dropped", pub),
			Why: "a replication slot cannot stream past that"}
	}
	var missing, fix []string
	var kinds []string
	for _, k := range []struct {
		on   bool
		kind string
	}{{p.Insert, "insert"}, {p.Update, "update"}, {p.Delete, "delete"}, {p.Truncate, "truncate"}} {
		if !k.on {
			missing = append(missing, k.kind+"s")
		}
		kinds = append(kinds, k.kind)
	}
	if len(missing) > 0 {
		fix = append(fix, fmt.Sprintf("ALTER PUBLICATION %s SET (publish = '%s')", quote(pub), strings.Join(kinds, ", ")))
	}
	if g.partitioned() && !p.ViaRoot {
		missing = append(missing, "the changes of partitions as their partitioned table's")
		fix = append(fix, fmt.Sprintf("ALTER PUBLICATION %s SET (publish_via_partition_root = true)", quote(pub)))
	}
	for _, oid := range slices.Sorted(maps.Keys(g.byOID)) {
		t := g.byOID[oid]
		name := qualified(t.schema, t.name)
		pt, ok := p.Tables[oid]
		switch {
		case !ok:
			missing = append(missing, name+" (taken out of it)")
			fix = append(fix, fmt.Sprintf("ALTER PUBLICATION %s ADD TABLE %s", quote(pub), name))
		case pt.RowFilter != "" || pt.Columns != "":
			what := "a row filter WHERE " + pt.RowFilter
			if pt.RowFilter == "" {
				what = "a column list"
			}
			missing = append(missing, fmt.Sprintf("every row and column of %s (it has %s)", name, what))
			fix = append(fix, fmt.Sprintf("ALTER PUBLICATION %s DROP TABLE %s", quote(pub), name),
				fmt.Sprintf("ALTER PUBLICATION %s ADD TABLE %s", quote(pub), name))
		}
	}
	if len(missing) == 0 {
		return nil
	}
	return &CatalogError{Publication: true, Fix: fix,
		Change: fmt.Sprintf("publication %s does not publish %s", pub, strings.Join(missing, ", ")),
		Why:    "pgoutput leaves out the changes it no longer publishes, so they never reach the replication slot"}
}
