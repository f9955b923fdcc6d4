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

// CheckpointVersion is the version of the checkpoint format Encode
// writes. Version 1 recorded one position per entity (After); Decode
// reads it as one range.
const CheckpointVersion = 2

// Checkpoint is the durable record of a migration's progress: per entity,
// whether it is done, or the ranges of its read with, in each, the
// position (see Range) after which its rows remain to be written. It is
// JSON (Encode, DecodeCheckpoint). Run resumes what one records
// (Options.Checkpoint) and records into it as batches are acknowledged.
// The application stores it: the pipeline owns its content, its format
// and its positions, not the file.
type Checkpoint struct {
	Version int `json:"version"`
	// Mapping is the fingerprint of the mapping file and the table name
	// (Fingerprint): a resumed run must use the same.
	Mapping string `json:"mapping"`
	// Source names the database, without its password.
	Source string `json:"source"`
	Table  string `json:"table"`
	// TableID and TableCreated identify the table the run wrote to
	// (DescribeTable's TableId and CreationDateTime, or the CreationDateTime
	// alone where a server has no TableId): a resumed run goes on only
	// into that table, not one re-created or restored under its name.
	TableID      string    `json:"table_id,omitempty"`
	TableCreated time.Time `json:"table_created,omitzero"`
	// Shapes are the shapes of the plans the table's items were derived
	// with, by entity (transform.Plan.Shape): a follow that resumes after
	// an entity's columns changed derives its items again.
	Shapes map[string]transform.Shape `json:"shapes,omitempty"`
	// Catalog is what a follow last found of the source's catalog
	// (follow.Fingerprint, as JSON), which the table's items agree with;
	// DDLCapture is set when its slot was created with DDL capture
	// installed, so that a resumed follow streams it too.
	Catalog    json.RawMessage `json:"catalog,omitempty"`
	DDLCapture bool            `json:"ddl_capture,omitempty"`
	// Evolved is the last new version of the mapping a follow applied
	// to the table beside its stream, recorded with Mapping once its
	// comparison was done: the first 16 hex digits of the SHA-256 of the
	// version before and of Mapping's file, "FROM TO" (load.Evolving's
	// text, the table's pg2dynamo:evolving tag while the change was under
	// way).
	Evolved  string                     `json:"evolved,omitempty"`
	Entities map[string]*EntityProgress `json:"entities"`
	// Updated is when it was last encoded (UTC).
	Updated time.Time `json:"updated"`
}

// EntityProgress is one entity's progress in a Checkpoint.
type EntityProgress struct {
	Done bool `json:"done"`
	// Ranges are the parts of the entity's read (one, or one per parallel
	// reader) as the run last recorded them; each range's After is the
	// position of its last row written or rejected with every earlier row
	// of the range.
	Ranges []Range `json:"ranges,omitempty"`
	// After is a version 1 checkpoint's position: one range. Decode moves
	// it into Ranges.
	After []string `json:"after,omitempty"`
}

// Fingerprint identifies a mapping file's content and target table: the
// hex SHA-256 of the file, a zero byte and the table name.
func Fingerprint(mappingFile []byte, table string) string {
	h := sha256.New()
	h.Write(mappingFile)
	h.Write([]byte{0})
	h.Write([]byte(table))
	return hex.EncodeToString(h.Sum(nil))
}

// NewCheckpoint returns an empty checkpoint of a run of the entities of
// plans from source (named without its password) into table, with the
// mapping's fingerprint.
func NewCheckpoint(fingerprint, source, table string, plans []*transform.Plan) *Checkpoint {
	cp := &Checkpoint{Version: CheckpointVersion, Mapping: fingerprint, Source: source, Table: table,
		Entities: map[string]*EntityProgress{}, Shapes: map[string]transform.Shape{}}
	for _, p := range plans {
		cp.Shapes[p.Entity().Name] = p.Shape()
	}
	cp.track(plans)
	return cp
}

// DecodeCheckpoint parses a checkpoint Encode wrote, or a version 1 one.
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

// Check returns an error when cp was not written for the mapping of
// fingerprint and for source.
func (cp *Checkpoint) Check(fingerprint, source string) error {
	switch {
	case cp.Mapping != fingerprint:
		return fmt.Errorf("it was written for another mapping file or table")
	case cp.Source != source:
		return fmt.Errorf("it was written for source %s, not %s", cp.Source, source)
	}
	return nil
}

// track adds an empty record for each entity of plans cp lacks.
func (cp *Checkpoint) track(plans []*transform.Plan) {
	for _, p := range plans {
		if cp.Entities[p.Entity().Name] == nil {
			cp.Entities[p.Entity().Name] = &EntityProgress{}
		}
	}
}

// record sets entity's ranges, and reports whether the entity is done.
func (cp *Checkpoint) record(entity string, rs []Range) bool {
	ep := cp.Entities[entity]
	ep.Ranges, ep.After, ep.Done = rs, nil, true
	for _, r := range rs {
		ep.Done = ep.Done && r.Done
	}
	return ep.Done
}

// resume is what a run resumes from a checkpoint, per entity (by index in
// plans): skip, the entities done; ranges, the recorded ranges of the
// others that read in order (nil: split afresh). A run without a
// checkpoint resumes nothing.
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

// resumeOf returns what a run of plans resumes from cp. An entity that
// reads in no order is read again whole unless it is done.
func (cp *Checkpoint) resumeOf(plans []*transform.Plan) resume {
	r := resume{skip: make([]bool, len(plans)), ranges: make([][]Range, len(plans))}
	if cp == nil {
		return r
	}
	for i, p := range plans {
		ep := cp.Entities[p.Entity().Name]
		switch {
		case ep == nil:
		case ep.Done:
			r.skip[i] = true
		case p.Ordered() && len(ep.Ranges) > 0:
			r.ranges[i] = ep.Ranges
		}
	}
	return r
}

// Describe says, per entity of plans with recorded progress, where a run
// resumes it: "orders (done)", "lines (after [42]; from the start)".
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
