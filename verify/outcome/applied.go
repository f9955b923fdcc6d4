package outcome

// Applied is what verify.Compare handed to verify.Options.Apply and how the
// table read back (verify.Options.ReadBack). Each list keeps the first
// verify.Options.MaxListed keys; Counts are exact. The lists live in the
// Result's temporary files until Result.Close.
type Applied struct {
	// Put lists the new and changed items handed to be put.
	Put List[ItemRef] `json:"-"`
	// Delete lists the stale items handed to be deleted; none when Withheld.
	Delete List[ItemRef] `json:"-"`
	// Unapplied lists keys that did not read back as applied: a put item absent
	// or different, a stale item still there with its type.
	Unapplied List[ItemRef] `json:"-"`
	Counts    AppliedCounts `json:"counts"`
	// Withheld says why no stale item was deleted: the derivation is in doubt
	// (a count disagrees with count(*), or a key is derived twice); "" when
	// they were, or there were none.
	Withheld string `json:"withheld,omitempty"`
	// ReadBack: every key put or deleted was read again (strongly consistent,
	// after Wait). Matched puts read back as derived, Gone stale items are
	// gone, Retyped ones hold another writer's type, Refused puts were rejects
	// (verify.Refusals); the rest are Unapplied.
	ReadBack bool  `json:"read_back"`
	Matched  int64 `json:"matched"`
	Gone     int64 `json:"gone"`
	Retyped  int64 `json:"retyped"`
	Refused  int64 `json:"refused"`
}

// AppliedCounts gives the exact length of each of Applied's lists.
type AppliedCounts struct {
	Put       ListCount `json:"put"`
	Delete    ListCount `json:"delete"`
	Unapplied ListCount `json:"unapplied"`
}

// Truncated reports whether a list left keys out.
func (a *Applied) Truncated() bool {
	c := a.Counts
	return c.Put.Truncated() || c.Delete.Truncated() || c.Unapplied.Truncated()
}

// AppliedOK reports whether the table matched the source once the differences
// were applied: counts agree, no key derived twice, nothing withheld, every key
// read back as applied, every access pattern answered right after the writes.
// False without Apply or read-back.
func (r *Result) AppliedOK() bool {
	a := r.Applied
	if a == nil || !a.ReadBack || a.Withheld != "" || a.Counts.Unapplied.Total > 0 || r.Counts.Duplicates.Total > 0 {
		return false
	}
	return r.checksOK()
}
