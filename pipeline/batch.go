package pipeline

import (
	"github.com/pg2dynamo/pg2dynamo/load"
	"github.com/pg2dynamo/pg2dynamo/transform"
)

// batch is what one Write gets: up to load.MaxBatchItems items, whole rows
// only; rowEnd marks each row's last item.
type batch struct {
	items  []transform.Item
	rowEnd []bool
}

func (b *batch) fits(n int) bool { return len(b.items)+n <= load.MaxBatchItems }

// add appends one row's items and reports whether b is full.
func (b *batch) add(items []transform.Item) bool {
	for j, it := range items {
		b.items = append(b.items, it)
		b.rowEnd = append(b.rowEnd, j == len(items)-1)
	}
	return len(b.items) == load.MaxBatchItems
}
