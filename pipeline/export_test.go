package pipeline

import (
	"github.com/pg2dynamo/pg2dynamo/mapping"
	"github.com/pg2dynamo/pg2dynamo/transform"
)

// WithKeysUnique returns o with prove in place of transform.KeysUnique,
// the proof of unique keys Run relies on.
func WithKeysUnique(o Options, prove func(*mapping.Mapping, []*transform.Plan) []bool) Options {
	o.keysUnique = prove
	return o
}
