package transform

// ReferenceItems is Plan.Items before Builder, for comparisons and the
// baseline benchmark.
func ReferenceItems(p *Plan, values []any, dst []Item) ([]Item, error) {
	return p.referenceItems(values, dst)
}
