package follow

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pglogrepl"

	"github.com/pg2dynamo/pg2dynamo/extract"
)

// What the catalog alone says of the followed tables: changes that reach items
// without row changes in the WAL (enum labels renamed, tables rewritten,
// partitions attached or detached, the publication narrowed). A follow compares
// a Fingerprint of them at start, at DDL commands and every CatalogInterval:
// each difference is derived again or stops it (*CatalogError).

// Fingerprint and its parts are extract's.
type (
	Fingerprint      = extract.Fingerprint
	TablePrint       = extract.TablePrint
	ColumnPrint      = extract.ColumnPrint
	PublicationPrint = extract.PublicationPrint
	PublishedTable   = extract.PublishedTable
)

// ReadFingerprint reads the Fingerprint of g's tables and publication pub
// through q; a dropped table is absent from Tables.
func ReadFingerprint(ctx context.Context, q extract.Querier, g *Graph, pub string) (*Fingerprint, error) {
	return extract.NewCatalog(q).Fingerprint(ctx, slices.Sorted(maps.Keys(g.byOID)), pub)
}

// CatalogInterval is the longest a follow streams without comparing the
// catalog with its last Fingerprint (a DDL command is compared at once).
const CatalogInterval = 2 * time.Second

// CatalogError is a catalog change, found at or before LSN At, whose wrong
// items the stream cannot find (Why). Publication is set when the publication
// changed; Fix then holds the statements publishing its changes again.
type CatalogError struct {
	At          pglogrepl.LSN
	Change, Why string
	Publication bool
	Fix         []string
	// WhileStopped is set when the change was made while no follow ran.
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

// catalogVerdict is what a Fingerprint difference asks of a follow: entities
// to derive again whole, and changes it cannot derive its way out of.
type catalogVerdict struct {
	whole   []int
	changes []string // described, for the log
	stop    *CatalogError
}

// CompareCatalog compares a checkpoint's Fingerprint was with the catalog is:
// it returns the changes it can derive its way out of and the entities to
// derive again whole for them, or a *CatalogError.
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

// compare returns what the differences from was to is ask of a follow of g
// streaming pub; column changes and dropped tables are left to the stream's
// checks.
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
		stop = append(stop, g.partitionIdentities(t, now.Identities)...)
		if replaced := replacedStorage(old, now); len(replaced) > 0 && len(detached) == 0 && len(attached) == 0 {
			if len(now.Partitions) > 0 && g.ownsItems(t) && !retyped(old, now) {
				// pgoutput sends no TRUNCATE of a partition published via
				// its root: the rows it took may be gone.
				stop = append(stop, fmt.Sprintf("the storage of partitions %s of %s was replaced: a TRUNCATE of a partition, which pgoutput does not send, or VACUUM FULL or CLUSTER; the stream does not list the rows a TRUNCATE took", strings.Join(replaced, ", "), name))
			} else {
				// Rewritten: ALTER TABLE … TYPE … USING, VACUUM FULL or
				// CLUSTER. A retype the stream describes is derived again
				// there; the rest here.
				v.changes = append(v.changes, fmt.Sprintf("%s rewritten (ALTER TABLE … USING, VACUUM FULL or CLUSTER)", name))
				rederive = true
			}
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

// replacedStorage names the relations whose TablePrint.Storage changed.
func replacedStorage(was, is *TablePrint) []string {
	var out []string
	for _, s := range is.Storage {
		if !slices.Contains(was.Storage, s) {
			out = append(out, s[:strings.LastIndexByte(s, ':')])
		}
	}
	return out
}

// retyped reports whether a kept column changed type from was to is.
func retyped(was, is *TablePrint) bool {
	for c, nc := range is.Columns {
		if oc, ok := was.Columns[c]; ok && oc.Type != nc.Type {
			return true
		}
	}
	return false
}

// CheckPublication returns a *CatalogError when publication pub leaves out
// changes of g's tables.
func (g *Graph) CheckPublication(fp *Fingerprint, pub string) error {
	if p := g.publicationProblems(fp.Publication, pub); p != nil {
		return p
	}
	return nil
}

// ownsItems reports whether t is an entity's own source: a row gone takes an
// item with it.
func (g *Graph) ownsItems(t *table) bool {
	return slices.ContainsFunc(t.effects, func(e effect) bool { return e.kind == own })
}

// lostLabels returns the labels of was renamed or reordered in is; added labels
// change no row.
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

// publicationProblems returns a *CatalogError when p leaves out changes of g's
// tables (gone, skipping a kind, not via the root, or not every table whole).
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
