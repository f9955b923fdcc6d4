package outcome

// OrderMismatch is two items of one entity and sort key template that a Query
// returned in an order PostgreSQL contradicts: ordering the template columns'
// source values (ORDER BY them in template order, text-like ones COLLATE "C",
// in the Query's direction) puts Second strictly before First.
type OrderMismatch struct {
	Entity string `json:"entity"`
	// SortKey is the index's sort attribute; Template the entity's template for
	// it.
	SortKey  string `json:"sort_key"`
	Template string `json:"template"`
	// OrderBy is the ORDER BY PostgreSQL ran: `delta`, `name COLLATE "C" DESC`.
	OrderBy string      `json:"order_by"`
	First   OrderedItem `json:"first"`
	Second  OrderedItem `json:"second"`
}

// OrderedItem is an item of an OrderMismatch.
type OrderedItem struct {
	// Position is the item's 1-based position in the Query's answer.
	Position int `json:"position"`
	// Key is its sort key value.
	Key string `json:"key"`
	// Values are the template columns' source values, in PostgreSQL's text
	// form.
	Values map[string]string `json:"values"`
}
