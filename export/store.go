// Package export writes a migration's items as files DynamoDB loads itself
// (ImportTable into a new table, StartBulkPutItems into an existing one):
// DynamoDB JSON, one {"Item": {...}} a line, gzip or zstd compressed, in
// objects of bounded size under an S3 prefix or a local directory, with a
// manifest. The format:
// https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/S3DataImport.Format.html
package export

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/s3/manager"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// Store is where an export's objects go.
type Store interface {
	// Create starts object key ("data/00001.json.gz"); Close completes it.
	Create(ctx context.Context, key string) (Writer, error)
	// Remove deletes the complete object key; a missing one is no error.
	Remove(ctx context.Context, key string) error
	// URL names object key, for messages and the manifest.
	URL(key string) string
	// List returns the keys beginning with prefix, in key order.
	List(ctx context.Context, prefix string) ([]string, error)
}

// Writer is an object being written: Close completes it, whole; Abort, instead,
// leaves nothing of it. One of them is called once.
type Writer interface {
	io.WriteCloser
	Abort() error
}

// IsTemporary reports whether key is a Dir's temporary file, a dot-name
// (data/.shard-1-of-2-00001.json.gz.3141592653); S3 has none.
func IsTemporary(key string) bool { return strings.HasPrefix(path.Base(key), ".") }

// Location is a parsed --to or --from: an S3 bucket and prefix, or a directory.
type Location struct {
	// Bucket and Prefix of s3://bucket/prefix/ (Prefix without a leading slash,
	// with a trailing one unless empty).
	Bucket, Prefix string
	// Dir is the directory of file:///dir/.
	Dir string
}

// ParseLocation parses s3://BUCKET/PREFIX/ (adding a missing trailing slash) or
// file:///DIR/.
func ParseLocation(s string) (Location, error) {
	u, err := url.Parse(s)
	if err != nil {
		return Location{}, fmt.Errorf("%q: %w", s, err)
	}
	switch u.Scheme {
	case "s3":
		if u.Host == "" {
			return Location{}, fmt.Errorf("%q: expected s3://BUCKET/PREFIX/", s)
		}
		p := strings.TrimPrefix(u.Path, "/")
		if p != "" && !strings.HasSuffix(p, "/") {
			p += "/"
		}
		return Location{Bucket: u.Host, Prefix: p}, nil
	case "file":
		if u.Host != "" && u.Host != "localhost" || u.Path == "" {
			return Location{}, fmt.Errorf("%q: expected file:///ABSOLUTE/DIR/", s)
		}
		return Location{Dir: u.Path}, nil
	}
	return Location{}, fmt.Errorf("%q: expected s3://BUCKET/PREFIX/ or file:///DIR/", s)
}

// String is the location as a URL.
func (l Location) String() string {
	if l.Dir != "" {
		return "file://" + l.Dir
	}
	return "s3://" + l.Bucket + "/" + l.Prefix
}

// S3 is a Store of multipart uploads (feature/s3/manager): an object streams in
// parts, one in flight, so neither memory nor disk holds it whole.
type S3 struct {
	Client *s3.Client
	Loc    Location
	// PartSize is the parts' size in bytes: PartSize(Options.ObjectBytes).
	// https://docs.aws.amazon.com/AmazonS3/latest/userguide/qfacts.html
	PartSize int64
}

// MaxObjectBytes bounds Options.ObjectBytes on S3, whose objects hold at most
// 5 TiB, leaving room for a compressor's overhead on incompressible items.
const MaxObjectBytes = 4 << 40

// PartSize uploads an object of objectBytes in at most 9,000 parts of 5 MiB or
// more: S3 takes 10,000, the spare ones for an item or compressor overshoot.
func PartSize(objectBytes int64) int64 {
	return max(manager.MinUploadPartSize, (objectBytes+8999)/9000)
}

// Create starts the upload of object key.
func (s *S3) Create(ctx context.Context, key string) (Writer, error) {
	// manager is deprecated for transfermanager, still v0.x; move at v1.
	up := manager.NewUploader(s.Client, func(u *manager.Uploader) { //nolint:staticcheck // SA1019: see above
		u.PartSize = max(s.PartSize, manager.MinUploadPartSize)
		u.Concurrency = 1
	})
	pr, pw := io.Pipe()
	o := &s3Object{s: s, key: key, pw: pw, done: make(chan error, 1)}
	go func() {
		in := &s3.PutObjectInput{Bucket: aws.String(s.Loc.Bucket), Key: aws.String(s.Loc.Prefix + key), Body: pr}
		_, err := up.Upload(ctx, in) //nolint:staticcheck // SA1019: see NewUploader above
		pr.CloseWithError(err)       // a writer blocked on a failed upload fails too
		o.done <- err
	}()
	return o, nil
}

// Remove deletes object key (DeleteObject).
func (s *S3) Remove(ctx context.Context, key string) error {
	_, err := s.Client.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(s.Loc.Bucket), Key: aws.String(s.Loc.Prefix + key)})
	if err != nil {
		return fmt.Errorf("delete %s: %w", s.URL(key), err)
	}
	return nil
}

// URL is s3://bucket/prefix/key.
func (s *S3) URL(key string) string { return "s3://" + s.Loc.Bucket + "/" + s.Loc.Prefix + key }

// List lists the objects whose key begins with prefix.
func (s *S3) List(ctx context.Context, prefix string) ([]string, error) {
	return ListKeys(ctx, s.Client, s.Loc, prefix)
}

// ListKeys returns loc's keys beginning with prefix, in key order.
func ListKeys(ctx context.Context, client *s3.Client, loc Location, prefix string) ([]string, error) {
	var out []string
	sub := Location{Bucket: loc.Bucket, Prefix: loc.Prefix + prefix}
	if err := eachObject(ctx, client, sub, func(key string, _ Version) error { out = append(out, prefix+key); return nil }); err != nil {
		return nil, err
	}
	return out, nil
}

type s3Object struct {
	s    *S3
	key  string
	pw   *io.PipeWriter
	done chan error
}

func (o *s3Object) Write(p []byte) (int, error) { return o.pw.Write(p) }

// Close ends the body and waits for the upload to complete.
func (o *s3Object) Close() error {
	o.pw.Close()
	if err := <-o.done; err != nil {
		return fmt.Errorf("upload: %w", err)
	}
	return nil
}

var errAborted = errors.New("export: object aborted")

// abortTimeout bounds Abort's own AbortMultipartUpload.
const abortTimeout = 30 * time.Second

// Abort fails the body, so the uploader sends no PutObject and aborts its
// multipart upload. The uploader aborts with Create's context, which an
// interrupted run has cancelled: Abort then aborts the upload again with a
// context of its own, as an incomplete multipart upload is billed and no
// listing shows it.
// https://docs.aws.amazon.com/AmazonS3/latest/userguide/abort-mpu.html
func (o *s3Object) Abort() error {
	o.pw.CloseWithError(errAborted)
	err := <-o.done
	var mf manager.MultiUploadFailure //nolint:staticcheck // SA1019: see NewUploader above
	if !errors.As(err, &mf) {
		return nil // no multipart upload began, or the uploader could not start one
	}
	ctx, cancel := context.WithTimeout(context.Background(), abortTimeout)
	defer cancel()
	_, aerr := o.s.Client.AbortMultipartUpload(ctx, &s3.AbortMultipartUploadInput{
		Bucket: aws.String(o.s.Loc.Bucket), Key: aws.String(o.s.Loc.Prefix + o.key), UploadId: aws.String(mf.UploadID())})
	var nsu *types.NoSuchUpload
	if aerr != nil && !errors.As(aerr, &nsu) { // NoSuchUpload: the uploader's abort went through
		return fmt.Errorf("abort upload %s of %s: %w", mf.UploadID(), o.s.URL(o.key), aerr)
	}
	return nil
}

// Dir is a Store of temporary files renamed into place when closed.
type Dir struct{ Path string }

// Create creates a temporary file beside key's (see IsTemporary).
func (d Dir) Create(_ context.Context, key string) (Writer, error) {
	path := filepath.Join(d.Path, filepath.FromSlash(key))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return nil, err
	}
	return &dirFile{f: f, path: path}, nil
}

// List returns the files whose slash path begins with prefix.
func (d Dir) List(_ context.Context, prefix string) ([]string, error) {
	var out []string
	err := filepath.WalkDir(d.Path, func(path string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(d.Path, path)
		if err != nil || e.IsDir() {
			return err
		}
		if key := filepath.ToSlash(rel); strings.HasPrefix(key, prefix) {
			out = append(out, key)
		}
		return nil
	})
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return out, err
}

// Remove removes the file of key.
func (d Dir) Remove(_ context.Context, key string) error {
	if err := os.Remove(filepath.Join(d.Path, filepath.FromSlash(key))); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// URL is file:///dir/key.
func (d Dir) URL(key string) string {
	return "file://" + filepath.Join(d.Path, filepath.FromSlash(key))
}

type dirFile struct {
	f    *os.File
	path string
}

func (f *dirFile) Write(p []byte) (int, error) { return f.f.Write(p) }

func (f *dirFile) Close() error {
	err := errors.Join(f.f.Sync(), f.f.Close())
	if err == nil {
		err = os.Rename(f.f.Name(), f.path)
	}
	if err != nil {
		os.Remove(f.f.Name())
	}
	return err
}

// Abort closes and removes the temporary file.
func (f *dirFile) Abort() error {
	f.f.Close()
	if err := os.Remove(f.f.Name()); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}
