// Package outcome is what verify finds comparing a table with its source:
// the Result, its counts, its sorted lists of items and the access patterns'
// results. verify.Compare makes it; report renders it, engine and app read it.
package outcome

import (
	"encoding/json"
	"slices"

	"github.com/pg2dynamo/pg2dynamo/internal/extsort"
)

// ItemRef names an item by its primary key and type.
type ItemRef struct {
	PK   string `json:"pk"`
	SK   string `json:"sk"`
	Type string `json:"type,omitempty"`
}

// AttrChange is one differing attribute: Before in the table, After as derived;
// null for absent.
type AttrChange struct {
	Attribute string          `json:"attribute"`
	Before    json.RawMessage `json:"before"`
	After     json.RawMessage `json:"after"`
}

// ChangedItem is an item whose content differs.
type ChangedItem struct {
	ItemRef
	Changes []AttrChange `json:"changes"`
	// Before and After are the whole items, for the first verify.Options.SampleChanged.
	Before json.RawMessage `json:"before,omitempty"`
	After  json.RawMessage `json:"after,omitempty"`
}

// EntityCounts compares one entity's items. PostgreSQL's count(*) of its source
// gives Expected = (SourceRows − Rejected) × ItemsPerRow; the transform must
// derive that many items with distinct keys, else CountProblem says what
// differs and verification fails.
type EntityCounts struct {
	Entity string `json:"entity"`
	Type   string `json:"type"`
	// SourceRows is PostgreSQL's count(*) of the entity's source.
	SourceRows int64 `json:"source_rows"`
	// Rows is the rows the transform read; Rejected those giving no item, as
	// migrate rejects them.
	Rows     int64 `json:"rows"`
	Rejected int64 `json:"rejected"`
	// ItemsPerRow is 1, or 2 for an entity with a mirror item.
	ItemsPerRow int64 `json:"items_per_row"`
	// Expected is (SourceRows − Rejected) × ItemsPerRow.
	Expected int64 `json:"expected"`
	// Derived is the distinct items derived; Duplicates the items whose key an
	// earlier one (of any entity) has, which migrate would write over each
	// other.
	Derived    int64 `json:"derived"`
	Duplicates int64 `json:"duplicates"`
	// CountProblem says how the counts disagree; empty when they agree.
	CountProblem string `json:"count_problem,omitempty"`
	// Table items of this type.
	Table     int64 `json:"table"`
	Missing   int64 `json:"missing"`
	Changed   int64 `json:"changed"`
	Unchanged int64 `json:"unchanged"`
	// Stale items of this type the source no longer produces.
	Stale int64 `json:"stale"`
	// InFlight items of this type differ but changed after the snapshot
	// (verify.Options.InFlight): lag, not a mismatch.
	InFlight int64 `json:"in_flight,omitempty"`
	// WriteUnits a run writing every derived item consumes.
	WriteUnits int64 `json:"write_units"`
	// ChangeWriteUnits is putting only new and changed items
	// (verify.Options.ChangeCost), a changed one at the larger of its versions, as
	// DynamoDB charges a replacing put; StaleWriteUnits is deleting stale items
	// at their size (in each GSI too).
	// https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/read-write-operations.html#write-operation-consumption
	ChangeWriteUnits int64 `json:"change_write_units,omitempty"`
	StaleWriteUnits  int64 `json:"stale_write_units,omitempty"`
	// ExportBytes is every derived item's size as uncompressed export DynamoDB
	// JSON (verify.Options.ExportBytes).
	ExportBytes int64 `json:"export_bytes,omitempty"`
}

// PatternResult is one access pattern run for one parameter tuple, or one not
// run (Params empty, Want and Got 0).
type PatternResult struct {
	Pattern string            `json:"pattern"`
	Index   string            `json:"index"`
	Params  map[string]string `json:"params"`
	Want    int               `json:"want"`
	Got     int               `json:"got"`
	OK      bool              `json:"ok"`
	Problem string            `json:"problem,omitempty"`
	// Order, when set, is the order mismatch Problem describes.
	Order *OrderMismatch `json:"order,omitempty"`
	// NotRun: no parameter tuple to run the Query with.
	NotRun bool `json:"not_run,omitempty"`
	// Note says why a passing result checked nothing (no item derived, no
	// parameters), or what it left unchecked: items whose filter result is
	// undecided, collection members PostgreSQL cannot count.
	Note string `json:"note,omitempty"`
	// Retries counts the GSI re-reads (verify.Options.IndexWait) before this result.
	Retries int `json:"retries,omitempty"`
	// InFlight counts differing items skipped as changed after the snapshot
	// (verify.Options.InFlight).
	InFlight int `json:"in_flight,omitempty"`
	// Scanned is, with a filter, the items the key condition read before
	// filtering (ScannedCount over the pages).
	Scanned int `json:"scanned,omitempty"`
	// Refused counts the items passed over, on either side, whose put the
	// table refused (verify.Refusals): rejects.
	Refused int `json:"refused,omitempty"`
	// Others counts the answer's items of other writers (a type the mapping
	// does not have, or none), passed over as the Scan's comparison passes
	// over them.
	Others int `json:"others,omitempty"`
}

// Result compares the table with what the source derives; its lists live in
// temporary files until Close.
type Result struct {
	Table string `json:"table"`
	// TableMissing: the table does not exist, so every item is missing.
	TableMissing bool           `json:"table_missing"`
	Entities     []EntityCounts `json:"entities"`
	// Missing items are derived from the source but not in the table.
	Missing List[ItemRef] `json:"missing"`
	// Extra items are in the table but not derived: of a mapped type (stale) or
	// not (unmanaged).
	Extra List[ItemRef] `json:"extra"`
	// Duplicates are keys derived more than once that no duplicate check
	// rejected, one entry per extra item.
	Duplicates List[ItemRef] `json:"duplicates"`
	Stale      int64         `json:"stale"`
	Unmanaged  int64         `json:"unmanaged"`
	// RetiredStale counts verify.Options.Retired's stale items (in Stale too),
	// RetiredWriteUnits their deletion.
	RetiredStale      int64             `json:"retired_stale,omitempty"`
	RetiredWriteUnits int64             `json:"retired_write_units,omitempty"`
	Changed           List[ChangedItem] `json:"changed"`
	// InFlight items differ but changes a follow committed after the snapshot
	// may explain (verify.Options.InFlight); they are in no other list.
	InFlight List[ItemRef] `json:"in_flight"`
	// ListsTruncated: some list holds only its first verify.Options.MaxListed
	// entries; the counts are complete.
	ListsTruncated bool `json:"lists_truncated,omitempty"`
	// Counts gives each list's exact length and how many entries it lists.
	Counts   ListCounts      `json:"counts"`
	Patterns []PatternResult `json:"patterns,omitempty"`
	// Held counts, by holding type ("(none)" without type attribute), missing
	// keys an item outside verify.Options.Types holds (verify.Options.Holders);
	// nil without Holders.
	Held map[string]int64 `json:"held,omitempty"`
	// Applied is what verify.Options.Apply was handed and read back; nil
	// without Apply.
	Applied *Applied `json:"applied,omitempty"`
	// Files holds the lists' entries until Close; nil when made by hand or
	// decoded.
	Files *extsort.Group `json:"-"`
}

// Close removes the temporary files, emptying the lists; hand-made or decoded
// Results have none.
func (r *Result) Close() error {
	if r.Files == nil {
		return nil
	}
	err := r.Files.Close()
	r.Files = nil
	r.Missing, r.Extra, r.Duplicates, r.Changed, r.InFlight = List[ItemRef]{}, List[ItemRef]{}, List[ItemRef]{}, List[ChangedItem]{}, List[ItemRef]{}
	if a := r.Applied; a != nil {
		a.Put, a.Delete, a.Unapplied = List[ItemRef]{}, List[ItemRef]{}, List[ItemRef]{}
	}
	return err
}

// WriteUnits is what writing every derived item consumes
// (EntityCounts.WriteUnits summed).
func (r *Result) WriteUnits() int64 {
	var n int64
	for _, e := range r.Entities {
		n += e.WriteUnits
	}
	return n
}

// OK reports whether the counts agree (EntityCounts), the table holds exactly
// the derived items, and every access pattern answered right in PostgreSQL's
// order. Unmanaged items are another writer's and do not fail it.
func (r *Result) OK() bool {
	c := r.Counts
	if r.TableMissing || c.Missing.Total > 0 || r.Stale > 0 || c.Changed.Total > 0 || c.Duplicates.Total > 0 {
		return false
	}
	return r.checksOK()
}

// checksOK reports whether every entity's counts and access pattern are right.
func (r *Result) checksOK() bool {
	return !slices.ContainsFunc(r.Entities, func(e EntityCounts) bool { return e.CountProblem != "" }) &&
		!slices.ContainsFunc(r.Patterns, func(p PatternResult) bool { return !p.OK })
}
