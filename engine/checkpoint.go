package engine

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/gofrs/flock"

	"github.com/pg2dynamo/pg2dynamo/pipeline"
)

// checkpointFile is a run's pipeline.Checkpoint and the file it is kept in,
// rewritten atomically (outputFile).
type checkpointFile struct {
	*pipeline.Checkpoint
	path string
	// every is the least time between two saves (CheckpointInterval).
	every time.Duration
	// mu serializes a follow's changes and a comparison's beside it (update).
	mu sync.Mutex
}

func (f *checkpointFile) update(change func()) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	change()
	return f.save()
}

// loadCheckpoint reads path; a missing file is a usage error.
func loadCheckpoint(j *job, path string) (*pipeline.Checkpoint, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, refused(fmt.Errorf("%s: no checkpoint at %s (a run writes one there as it goes; see %s)", j.opt(OptResume), path, j.opt(OptCheckpoint)))
	}
	if err != nil {
		return nil, err
	}
	cp, err := pipeline.DecodeCheckpoint(b)
	if err != nil {
		return nil, refused(fmt.Errorf("checkpoint %s: %w", path, err))
	}
	return cp, nil
}

func (f *checkpointFile) save() error {
	b, err := f.Encode(time.Now()) // sets Updated
	if err != nil {
		return err
	}
	if err := writeOutput(f.path, b); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	return nil
}

// onCheckpoint saves the plan (entity ""), then at most once an interval, and
// whenever an entity is done: rewriting per batch would cost more than the
// transform, and a crash redoes at most an interval.
func (f *checkpointFile) onCheckpoint(_ *pipeline.Checkpoint, entity string, done bool) error {
	if entity != "" && !done && time.Since(f.Updated) < f.every {
		return nil
	}
	return f.save()
}

// lockCheckpoint takes an advisory flock(2) on path+".lock" holding this pid,
// so a second run with the same checkpoint (and rejects file) is refused,
// naming the first. release removes the file and the lock; a killed process
// leaves the file, its lock gone. A lock on a file removed meanwhile is retaken
// on the new one. The file is never followed through a link and is mode 0600.
func lockCheckpoint(j *job, path string) (release func(), err error) {
	lockPath := path + ".lock"
	for {
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
			return nil, refused(fmt.Errorf("checkpoint %s is in use by %s: wait for it to end, or give this run its own %s and %s", path, holder, j.opt(OptCheckpoint), j.opt(OptRejects)))
		}
		if _, err := os.Lstat(lockPath); errors.Is(err, fs.ErrNotExist) {
			fl.Unlock() // removed by the run that held it: lock the new file
			continue
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
		return func() {
			os.Remove(lockPath)
			fl.Unlock()
		}, nil
	}
}
