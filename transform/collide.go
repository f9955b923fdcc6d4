package transform

// KeysMayMeet reports whether an item of plan p (its own item or its
// mirror's) and an item of plan o can have the same primary key
// (partition key and sort key), as KeysUnique judges it: they cannot when,
// for every pair of their key templates, the literal prefixes of the
// partition keys, or of the sort keys, differ before either ends ("ORG#"
// and "USER#"). With p == o it reports true: a plan's items can meet each
// other unless KeysUnique proves its keys unique. Nil plans meet nothing.
//
// The pipeline reads entities whose keys may meet one after another, in
// mapping order, so that the earlier row keeps a key whatever the parallel
// readers do.
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
