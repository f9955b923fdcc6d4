package app

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"syscall"
	"time"

	"github.com/gofrs/flock"

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

// lockCheckpoint takes an advisory lock (flock(2), through gofrs/flock) on
// path+".lock", the lock file of checkpoint path, and writes this
// process's pid into it, so that a second run started with the same
// checkpoint (and so, by default, the same rejects file) is refused while
// the first runs, naming the first's pid. The lock ends with the process
// whatever way it ends; release drops it earlier. The lock file is never
// followed through a symbolic link and is readable by its owner only.
func lockCheckpoint(path string) (release func(), err error) {
	lockPath := path + ".lock"
	fl := flock.New(lockPath, flock.SetFlag(os.O_CREATE|os.O_RDWR|syscall.O_NOFOLLOW), flock.SetPermissions(0o600))
	ok, err := fl.TryLock()
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", lockPath, err)
	}
	if !ok {
		holder := "another process"
		if b, err := os.ReadFile(lockPath); err == nil {
			if pid, err := strconv.Atoi(string(bytes.TrimSpace(b))); err == nil {
				holder = fmt.Sprintf("another pg2dynamo run (pid %d)", pid)
			}
		}
		return nil, usageError{fmt.Errorf("checkpoint %s is in use by %s: wait for it to end, or give this run its own --checkpoint and --rejects", path, holder)}
	}
	f, err := os.OpenFile(lockPath, os.O_WRONLY|os.O_TRUNC|syscall.O_NOFOLLOW, 0o600)
	if err == nil {
		_, err = fmt.Fprintf(f, "%d\n", os.Getpid())
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		fl.Unlock()
		return nil, fmt.Errorf("lock %s: %w", lockPath, err)
	}
	return func() { fl.Unlock() }, nil
}
