package engine

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// outputFile is a file pg2dynamo writes for the user: the rejects file,
// the JSON and HTML reports, the checkpoint, a CPU profile.
// They hold source values, so they are readable by their owner only
// (mode 0600), and they are never opened through the path they go to:
//
//   - The content is written to a new file, created in the path's
//     directory under a temporary name with O_CREATE|O_EXCL (so never an
//     existing file, and never through a link), then renamed over the
//     path by Publish or Close. Until then the path is left as it was,
//     and Discard leaves it so for good.
//   - A symbolic link at the path is refused when the file is created.
//     Should one be put there later, the rename replaces the link
//     itself: the file it points to is never written, and the target of
//     a dangling link is never created.
//   - A character device or a named pipe at the path (/dev/null, a FIFO)
//     is written in place, without creating or truncating anything.
//
// Rename is atomic on POSIX file systems: a reader (or a run resumed
// after a crash of the process) sees the old file or the new one, never
// a part of it. The file is not synced to disk before the rename, so a
// power loss may still leave it empty.
type outputFile struct {
	path string
	f    *os.File
	// tmp is the temporary name until the file is published; "" after,
	// and for a device written in place.
	tmp string
}

// createOutput prepares the output file for path; see outputFile. With
// keep, the new file starts with the content of the regular file at
// path, if any (a resumed run's rejects file adds to the last one). It
// fails, without changing anything at path, when path is a symbolic
// link, a directory or another kind of file that is not a character
// device or a named pipe, or when no file can be created in its
// directory; the error names path and wraps the *fs.PathError.
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

// openDevice opens the device or named pipe at path, which Lstat
// described as old, for writing in place; the file opened must be that
// one (not a link put there since).
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

// copyFrom appends the content of the regular file at o.path, which
// Lstat described as old, to o.
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

// Write writes p to the file (the new one, published or not).
func (o *outputFile) Write(p []byte) (int, error) { return o.f.Write(p) }

// Publish renames the new file over the path now; later writes still go
// to it. Publishing twice, or a device, does nothing.
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

// Close closes the file and publishes it if it is not yet. On an error
// the path is left as it was (or as Publish made it) and the new file is
// removed.
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

// Discard closes the file and removes it if it is not published: the
// path is left as it was. It does nothing after Close.
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

// writeOutput writes data to path as an outputFile: all of it, or,
// on an error, nothing.
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

// OutputFile is a file written for the user, as the engine writes its
// own (see outputFile): for the CLI's CPU profile.
type OutputFile = outputFile

// CreateOutput prepares a new output file for path (see createOutput):
// written by Write, published at path by Close, left unpublished by
// Discard.
func CreateOutput(path string) (*OutputFile, error) { return createOutput(path, false) }
