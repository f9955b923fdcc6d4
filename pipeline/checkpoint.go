package pipeline

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/pg2dynamo/pg2dynamo/transform"
)

// CheckpointVersion is the format Encode writes; Decode also reads version 1.
const CheckpointVersion = 2

// Checkpoint is the durable JSON record of a migration's progress: per entity,
// done, or its ranges with where rows remain. The application stores the file;
// the pipeline owns its content.
type Checkpoint struct {
	Version int `json:"version"`
	// Mapping is Fingerprint's: a resumed run must use the same.
	Mapping string `json:"mapping"`
	// Source names the database, without its password.
	Source string `json:"source"`
	Table  string `json:"table"`
	// TableID and TableCreated (DescribeTable's) bind a resumed run to that
	// table, not one re-created or restored under its name.
	TableID      string    `json:"table_id,omitempty"`
	TableCreated time.Time `json:"table_created,omitzero"`
	// Shapes are the plans' shapes: a follow re-derives a changed entity.
	Shapes map[string]transform.Shape `json:"shapes,omitempty"`
	// Catalog is a follow's last follow.Fingerprint; DDLCapture, its slot's DDL
	// capture.
	Catalog    json.RawMessage `json:"catalog,omitempty"`
	DDLCapture bool            `json:"ddl_capture,omitempty"`
	// Evolved is the last mapping change a follow applied ("FROM TO",
	// load.Evolving).
	Evolved  string                     `json:"evolved,omitempty"`
	Entities map[string]*EntityProgress `json:"entities"`
	// Updated is when it was last encoded (UTC).
	Updated time.Time `json:"updated"`
}

// EntityProgress is one entity's progress in a Checkpoint.
type EntityProgress struct {
	Done bool `json:"done"`
	// Ranges are the read's parts, recorded before the read; each After is
	// its written prefix's last row.
	Ranges []Range `json:"ranges,omitempty"`
	// After is a version 1 position; Decode moves it into Ranges.
	After []string `json:"after,omitempty"`
}

// Fingerprint is the hex SHA-256 of the mapping file, a zero byte and table.
func Fingerprint(mappingFile []byte, table string) string {
	h := sha256.New()
	h.Write(mappingFile)
	h.Write([]byte{0})
	h.Write([]byte(table))
	return hex.EncodeToString(h.Sum(nil))
}

// NewCheckpoint returns an empty checkpoint of plans from source into table.
func NewCheckpoint(fingerprint, source, table string, plans []*transform.Plan) *Checkpoint {
	cp := &Checkpoint{Version: CheckpointVersion, Mapping: fingerprint, Source: source, Table: table,
		Entities: map[string]*EntityProgress{}, Shapes: map[string]transform.Shape{}}
	for _, p := range plans {
		cp.Shapes[p.Entity().Name] = p.Shape()
	}
	cp.track(plans)
	return cp
}

// DecodeCheckpoint parses a checkpoint of version 1 or CheckpointVersion.
func DecodeCheckpoint(b []byte) (*Checkpoint, error) {
	cp := &Checkpoint{}
	if err := json.Unmarshal(b, cp); err != nil {
		return nil, err
	}
	if cp.Version < 1 || cp.Version > CheckpointVersion {
		return nil, fmt.Errorf("checkpoint version %d: this pg2dynamo reads versions 1 to %d", cp.Version, CheckpointVersion)
	}
	if cp.Entities == nil {
		cp.Entities = map[string]*EntityProgress{}
	}
	for _, ep := range cp.Entities {
		if ep != nil && len(ep.After) > 0 && len(ep.Ranges) == 0 {
			ep.Ranges, ep.After = []Range{{After: ep.After}}, nil
		}
	}
	cp.Version = CheckpointVersion
	return cp, nil
}

// Encode returns cp as indented JSON, with Updated set to now.
func (cp *Checkpoint) Encode(now time.Time) ([]byte, error) {
	cp.Updated = now.UTC()
	return json.MarshalIndent(cp, "", "  ")
}

// Check returns an error when cp was not written for fingerprint and source.
func (cp *Checkpoint) Check(fingerprint, source string) error {
	switch {
	case cp.Mapping != fingerprint:
		return fmt.Errorf("it was written for another mapping file or table")
	case cp.Source != source:
		return fmt.Errorf("it was written for source %s, not %s", cp.Source, source)
	}
	return nil
}

func (cp *Checkpoint) track(plans []*transform.Plan) {
	for _, p := range plans {
		if cp.Entities[p.Entity().Name] == nil {
			cp.Entities[p.Entity().Name] = &EntityProgress{}
		}
	}
}

// record sets entity's ranges and reports whether the entity is done.
func (cp *Checkpoint) record(entity string, rs []Range) bool {
	ep := cp.Entities[entity]
	ep.Ranges, ep.After, ep.Done = rs, nil, true
	for _, r := range rs {
		ep.Done = ep.Done && r.Done
	}
	return ep.Done
}

// resume is, by plan index, the entities done, and the ranges of ordered or
// done ones (a done one's bound its replay).
type resume struct {
	skip   []bool
	ranges [][]Range
}

func (r resume) skipped(i int) bool { return i < len(r.skip) && r.skip[i] }

func (r resume) recorded(i int) []Range {
	if i < len(r.ranges) {
		return r.ranges[i]
	}
	return nil
}

// resumeOf reads again whole an unordered entity that is not done.
func (cp *Checkpoint) resumeOf(plans []*transform.Plan) resume {
	r := resume{skip: make([]bool, len(plans)), ranges: make([][]Range, len(plans))}
	if cp == nil {
		return r
	}
	for i, p := range plans {
		ep := cp.Entities[p.Entity().Name]
		if ep == nil {
			continue
		}
		r.skip[i] = ep.Done
		if p.Ordered() || ep.Done {
			r.ranges[i] = ep.Ranges
		}
	}
	return r
}

// Unplanned names the ordered entities not done of which cp records no ranges
// (an earlier version's checkpoint): cut again from another snapshot, a
// shard's would not meet the other shards'.
func (cp *Checkpoint) Unplanned(plans []*transform.Plan) []string {
	var out []string
	for _, p := range plans {
		if ep := cp.Entities[p.Entity().Name]; p.Ordered() && (ep == nil || !ep.Done && len(ep.Ranges) == 0) {
			out = append(out, p.Entity().Name)
		}
	}
	return out
}

// Describe says where a run resumes each entity: "lines (after [42]; done)".
func (cp *Checkpoint) Describe(plans []*transform.Plan) []string {
	r := cp.resumeOf(plans)
	var out []string
	for i, p := range plans {
		name := p.Entity().Name
		if r.skip[i] {
			out = append(out, name+" (done)")
			continue
		}
		if len(r.ranges[i]) == 0 {
			continue
		}
		var at []string
		for _, rg := range r.ranges[i] {
			switch {
			case rg.Done:
				at = append(at, "done")
			case len(rg.After) > 0:
				at = append(at, fmt.Sprintf("after %v", rg.After))
			default:
				at = append(at, "from the start")
			}
		}
		out = append(out, fmt.Sprintf("%s (%s)", name, strings.Join(at, "; ")))
	}
	return out
}
