package engine

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// outputFile is a file pg2dynamo writes for the user (rejects, reports,
// checkpoint, CPU profile). They hold source values, so they are mode 0600, and
// never opened through their path: the content goes to a new file created
// beside it with O_CREATE|O_EXCL, renamed over the path by Publish or Close,
// which leaves the path as it was until then (and for good after Discard). A
// symbolic link at the path is refused, and one put there later is replaced,
// never followed. A character device or named pipe is written in place. The
// rename is atomic, so a reader or a resumed run sees the old file or the new;
// the file is not synced, so a power loss may leave it empty.
type outputFile struct {
	path string
	f    *os.File
	// tmp is the temporary name until published ("" after, and for a device).
	tmp string
}

// createOutput prepares the output file for path; with keep it starts with the
// regular file's content (a resumed run's rejects). It fails, changing nothing,
// on a link, a directory or another non-device, or when its directory takes no
// file; the error wraps the *fs.PathError.
func createOutput(path string, keep bool) (*outputFile, error) {
	if path == "" {
		return nil, errors.New("empty path: expected a file name")
	}
	old, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		old = nil
	case err != nil:
		return nil, err
	case old.Mode()&fs.ModeSymlink != 0:
		target, _ := os.Readlink(path)
		return nil, fmt.Errorf("%s is a symbolic link (to %s): output files are created new, never written through a link; give the path of the file itself, or a new one", path, target)
	case old.Mode()&(fs.ModeCharDevice|fs.ModeNamedPipe) != 0:
		return openDevice(path, old)
	case !old.Mode().IsRegular():
		return nil, fmt.Errorf("%s is a %s: expected a path for a file", path, kindOf(old.Mode()))
	}
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+base+".*.tmp") // O_CREATE|O_EXCL, mode 0600
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err // pe names the temporary file
		}
		return nil, &fs.PathError{Op: "create a file in the directory of", Path: path, Err: err}
	}
	o := &outputFile{path: path, f: f, tmp: f.Name()}
	if keep && old != nil {
		if err := o.copyFrom(old); err != nil {
			o.Discard()
			return nil, err
		}
	}
	return o, nil
}

// openDevice opens the device or pipe Lstat described as old, in place, making
// sure it is that one and not a link put there since.
func openDevice(path string, old fs.FileInfo) (*outputFile, error) {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return nil, err
	}
	if st, err := f.Stat(); err != nil || !os.SameFile(st, old) {
		f.Close()
		return nil, fmt.Errorf("%s changed while it was opened: expected the same file", path)
	}
	return &outputFile{path: path, f: f}, nil
}

// copyFrom appends the regular file at o.path, which Lstat described as old.
func (o *outputFile) copyFrom(old fs.FileInfo) error {
	src, err := os.Open(o.path)
	if err != nil {
		return err
	}
	defer src.Close()
	if st, err := src.Stat(); err != nil || !os.SameFile(st, old) {
		return fmt.Errorf("%s changed while it was opened: expected the same file", o.path)
	}
	if _, err := io.Copy(o.f, src); err != nil {
		return fmt.Errorf("copy %s: %w", o.path, err)
	}
	return nil
}

func kindOf(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "directory"
	case m&fs.ModeSocket != 0:
		return "socket"
	case m&fs.ModeDevice != 0:
		return "block device"
	}
	return "special file"
}

// Write writes p to the new file, published or not.
func (o *outputFile) Write(p []byte) (int, error) { return o.f.Write(p) }

// Publish renames the new file over the path now; later writes still go to it.
func (o *outputFile) Publish() error {
	if o.tmp == "" {
		return nil
	}
	if err := os.Rename(o.tmp, o.path); err != nil {
		return err
	}
	o.tmp = ""
	return nil
}

// Close closes and publishes the file; on error the new file is removed.
func (o *outputFile) Close() error {
	if o.f == nil {
		return nil
	}
	err := o.f.Close()
	o.f = nil
	if err == nil {
		err = o.Publish()
	}
	if err != nil {
		o.Discard()
	}
	return err
}

// Discard closes and removes the file if not published; no-op after Close.
func (o *outputFile) Discard() {
	if o.f != nil {
		o.f.Close()
		o.f = nil
	}
	if o.tmp != "" {
		os.Remove(o.tmp)
		o.tmp = ""
	}
}

// writeOutput writes all of data to path as an outputFile, or nothing.
func writeOutput(path string, data []byte) error {
	o, err := createOutput(path, false)
	if err != nil {
		return err
	}
	if _, err := o.Write(data); err != nil {
		o.Discard()
		return err
	}
	return o.Close()
}

// OutputFile is outputFile for the CLI's CPU profile.
type OutputFile = outputFile

// CreateOutput prepares a new output file for path: Close publishes it, Discard
// does not.
func CreateOutput(path string) (*OutputFile, error) { return createOutput(path, false) }
