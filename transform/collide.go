package transform

// KeysMayMeet reports whether an item (or mirror) of p and one of o can share a
// primary key, as KeysUnique judges: not when every pair of their templates has
// partition or sort key literal prefixes differing before either ends ("ORG#",
// "USER#"). With p == o it is true unless KeysUnique proves p's keys unique;
// nil plans meet nothing. The pipeline reads entities whose keys may meet one
// after another, in mapping order, so the earlier row keeps a key whatever the
// parallel readers do.
func KeysMayMeet(p, o *Plan) bool {
	if p == nil || o == nil {
		return false
	}
	for _, a := range p.keyPairs() {
		for _, b := range o.keyPairs() {
			if !disjoint(a[0], b[0]) && !disjoint(a[1], b[1]) {
				return true
			}
		}
	}
	return false
}
