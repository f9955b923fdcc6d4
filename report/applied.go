package report

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/pg2dynamo/pg2dynamo/verify/outcome"
)

// ModeChanges is migrate --changes-only's report: the comparison, what was
// written and deleted (Report.Applied), and the check of the result.
const ModeChanges = "changes"

// Commands that write what a comparison found (Applied.Command).
const (
	CommandChangesOnly = "changes-only"
	CommandPrune       = "prune"
)

// Applied is what a run wrote to bring the table in line (migrate
// --changes-only's puts and deletes, or --prune's deletes before the verify).
// Counts are exact, as acknowledged; the lists (outcome.Applied) hold the first
// verify.MaxListed keys, and the read-back.
type Applied struct {
	// Command is CommandChangesOnly or CommandPrune.
	Command string `json:"command"`
	*outcome.Applied
	// Written counts acknowledged puts (new and changed); Deleted stale items
	// deleted, DeletedByType by type; Skipped deletes whose condition failed
	// (retyped or deleted by another writer since the Scan); Rejected items
	// DynamoDB refused or whose key another type held (each in the rejects
	// file).
	Written       int64            `json:"written"`
	Deleted       int64            `json:"deleted"`
	DeletedByType map[string]int64 `json:"deleted_by_type,omitempty"`
	Skipped       int64            `json:"skipped"`
	Rejected      int64            `json:"rejected"`
	// WriteUnits is the acknowledged writes' cost as diff prices them
	// (verify.Write.WriteUnits), which the preceding diff estimates exactly.
	// ConsumedWriteUnits is what DynamoDB reported (ReturnConsumedCapacity);
	// FullWriteUnits a full migrate's.
	WriteUnits         int64   `json:"write_units"`
	ConsumedWriteUnits float64 `json:"consumed_write_units"`
	FullWriteUnits     int64   `json:"full_write_units"`
	// Unchecked says why the writes were not read back ("": --no-verify).
	Unchecked string `json:"unchecked,omitempty"`
}

// byType formats the deletes by type: "Order 2, Ticket 1".
func (a *Applied) byType() string {
	var parts []string
	for _, t := range slices.Sorted(maps.Keys(a.DeletedByType)) {
		parts = append(parts, fmt.Sprintf("%s %d", t, a.DeletedByType[t]))
	}
	return strings.Join(parts, ", ")
}

// changesHeadline is a ModeChanges verdict: PASSED when the writes read back
// and everything checks (outcome.Result.AppliedOK), FAILED when not, "done"
// without read-back.
func (r *Report) changesHeadline() string {
	n, a := r.Summary, r.Applied
	if a == nil || a.Applied == nil {
		return fmt.Sprintf("changes-only on table %s: nothing applied", r.Table)
	}
	verdict := "done (not verified: --no-verify)"
	if a.Unchecked != "" {
		verdict = "done (not verified: " + a.Unchecked + ")"
	}
	switch {
	case a.ReadBack && r.OK:
		verdict = "PASSED"
	case a.ReadBack:
		verdict = "FAILED"
	}
	s := fmt.Sprintf("changes-only %s: table %s, %d items derived and %d in the table compared; %d items written (%d new and %d changed found)",
		verdict, r.Table, r.Totals.Derived, r.Totals.Table+n.Other, a.Written, n.New, n.Changed)
	s += ", " + deletedPhrase(a, n.Stale)
	if a.Rejected > 0 {
		s += fmt.Sprintf(", %d rejected (see the rejects file)", a.Rejected)
	}
	s += fmt.Sprintf("; %d write units (a full re-put: %d)", a.WriteUnits, a.FullWriteUnits)
	if n := countProblems(r.Entities); n > 0 {
		s += ", " + Count(int64(n), "entity", "entities") + " whose counts disagree"
	}
	if n := n.Duplicates; n > 0 {
		s += ", " + Count(n, "key", "keys") + " derived more than once"
	}
	if !a.ReadBack {
		return s
	}
	switch u := a.Counts.Unapplied.Total; {
	case u > 0:
		s += fmt.Sprintf("; %d of the writes did not read back as applied", u)
	case a.Refused > 0:
		s += fmt.Sprintf("; every write but the %d rejected read back as applied", a.Refused)
	default:
		s += "; every write read back as applied"
	}
	bad := 0
	for _, p := range r.Patterns {
		if !p.OK {
			bad++
		}
	}
	return s + fmt.Sprintf("; %d access-pattern queries, %d wrong", len(r.Patterns), bad)
}

// deletedPhrase says what became of the stale items found.
func deletedPhrase(a *Applied, stale int64) string {
	if a.Withheld != "" {
		return fmt.Sprintf("%d stale not deleted: %s", stale, a.Withheld)
	}
	s := fmt.Sprintf("%d stale deleted", a.Deleted)
	if a.Skipped > 0 {
		s += fmt.Sprintf(" (%d skipped: retyped by another writer since the Scan)", a.Skipped)
	}
	return s
}

// appliedRows are the lines of a report's writes section: label, value.
func appliedRows(r *Report) [][2]string {
	a := r.Applied
	var rows [][2]string
	add := func(label, format string, args ...any) {
		rows = append(rows, [2]string{label, fmt.Sprintf(format, args...)})
	}
	if a.Command == CommandChangesOnly {
		add("compared", "%d items derived from the source, %d in the table", r.Totals.Derived, r.Totals.Table+r.Summary.Other)
		add("written", "%d (the comparison found %d new, %d changed)", a.Written, r.Summary.New, r.Summary.Changed)
	}
	switch {
	case a.Withheld != "":
		add("deleted", "none of the stale items: %s", a.Withheld)
	case a.Deleted > 0:
		add("deleted", "%d stale (%s)", a.Deleted, a.byType())
	default:
		add("deleted", "0 stale")
	}
	if a.Skipped > 0 {
		add("skipped", "%d stale items retyped by another writer since the Scan: the delete's condition left them", a.Skipped)
	}
	if a.Rejected > 0 {
		add("rejected", "%d items not written (DynamoDB refused them, or an item of another type held their key): see the rejects file", a.Rejected)
	}
	wu := fmt.Sprintf("%d as diff prices them; %.1f as DynamoDB reported them", a.WriteUnits, a.ConsumedWriteUnits)
	if a.Command == CommandChangesOnly {
		wu += fmt.Sprintf("; a full re-put of every item: %d", a.FullWriteUnits)
	}
	add("write units", "%s", wu)
	if a.Command == CommandChangesOnly {
		if a.ReadBack {
			add("read back", "%d put as derived, %d deleted gone, %d retyped, %d not as applied", a.Matched, a.Gone, a.Retyped, a.Counts.Unapplied.Total)
		} else {
			add("read back", "no (--no-verify)")
		}
	}
	return rows
}

// appliedTitle heads a report's writes section.
func appliedTitle(a *Applied) string {
	if a.Command == CommandPrune {
		return "Pruned before the check (migrate --prune)"
	}
	return "Writes (migrate --changes-only)"
}

// Titles of the lists of Applied.
const (
	titlePruned    = "Deleted by migrate --prune"
	titleUnapplied = "Writes that did not read back as applied"
)

// changesTitle titles a ModeChanges list of new, changed or stale items, saying
// what became of them.
func changesTitle(r *Report, kind string) string {
	switch kind {
	case "new":
		return "New items, written"
	case "changed":
		return "Changed items, written"
	}
	if r.Applied != nil && r.Applied.Withheld != "" {
		return staleTitle(r) + ", not deleted"
	}
	if r.Summary.Other > 0 {
		return "Stale items, deleted, and other items of no mapped type, left alone"
	}
	return "Stale items, deleted"
}

// appliedLists are r.Applied's lists the reports show besides the Result's: the
// keys --prune deleted, and writes that did not read back.
func appliedLists(r *Report) []struct {
	id, title string
	list      outcome.List[outcome.ItemRef]
	count     outcome.ListCount
} {
	a := r.Applied
	if a == nil || a.Applied == nil {
		return nil
	}
	type l = struct {
		id, title string
		list      outcome.List[outcome.ItemRef]
		count     outcome.ListCount
	}
	var out []l
	if a.Command == CommandPrune {
		out = append(out, l{"pruned", titlePruned, a.Delete, a.Counts.Delete})
	}
	return append(out, l{"unapplied", titleUnapplied, a.Unapplied, a.Counts.Unapplied})
}
