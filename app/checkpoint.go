package app

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"

	"github.com/pg2dynamo/pg2dynamo/pipeline"
)

// checkpoint is the durable record of a migration's progress: per entity,
// whether it is done, or the primary key after which its rows remain to be
// read. It is rewritten (atomically: a temporary file renamed over it) each
// time a batch acknowledgement moves an entity's written prefix.
type checkpoint struct {
	Version int `json:"version"`
	// Mapping is the SHA-256 of the mapping file and the table name: a
	// resumed run must use the same.
	Mapping string `json:"mapping"`
	// Source names the database, without its password.
	Source   string                     `json:"source"`
	Table    string                     `json:"table"`
	Entities map[string]*entityProgress `json:"entities"`
	Updated  time.Time                  `json:"updated"`
	path     string
}

type entityProgress struct {
	Done bool `json:"done"`
	// Ranges are the parts of the entity's read (one, or one per parallel
	// reader) as pipeline.Options.OnProgress last reported them; each
	// range's After is the primary key (key text) of its last row written
	// or rejected with every earlier row of the range.
	Ranges []pipeline.Range `json:"ranges,omitempty"`
	// After is a version 1 checkpoint's position: one range.
	After []string `json:"after,omitempty"`
}

// fingerprint identifies a mapping file's content and target table.
func fingerprint(mappingFile, table string) (string, error) {
	b, err := os.ReadFile(mappingFile)
	if err != nil {
		return "", err
	}
	h := sha256.New()
	h.Write(b)
	h.Write([]byte{0})
	h.Write([]byte(table))
	return hex.EncodeToString(h.Sum(nil)), nil
}

// loadCheckpoint reads path; a missing file is an error naming it.
func loadCheckpoint(path string) (*checkpoint, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, usageError{fmt.Errorf("--resume: no checkpoint at %s (a run writes one there as it goes; see --checkpoint)", path)}
	}
	if err != nil {
		return nil, err
	}
	cp := &checkpoint{path: path}
	if err := json.Unmarshal(b, cp); err != nil {
		return nil, fmt.Errorf("checkpoint %s: %w", path, err)
	}
	return cp, nil
}

// save writes the checkpoint atomically (a new file renamed over it; see
// outputFile).
func (cp *checkpoint) save() error {
	cp.Updated = time.Now().UTC()
	b, err := json.MarshalIndent(cp, "", "  ")
	if err != nil {
		return err
	}
	if err := writeOutput(cp.path, b); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	return nil
}
