package export

import (
	"bytes"
	"context"
	"errors"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go"
	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"

	"github.com/pg2dynamo/pg2dynamo/tools/testenv"
)

// An S3 object aborted leaves no object and no multipart upload, whether
// it was one part or several; Remove deletes a complete one. Against an
// S3 server in process (gofakes3), through the SDK's client.
func TestS3AbortAndRemove(t *testing.T) {
	ctx := context.Background()
	t.Setenv("AWS_ACCESS_KEY_ID", "fake")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "fake")
	backend := s3mem.New()
	if err := backend.CreateBucket("exports"); err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(gofakes3.New(backend).Server())
	defer ts.Close()
	client, err := NewS3Client(ctx, S3Config{Region: "us-east-1", EndpointURL: ts.URL})
	if err != nil {
		t.Fatal(err)
	}
	loc := Location{Bucket: "exports", Prefix: "run/"}
	store := &S3{Client: client, Loc: loc}
	left := func() ([]string, int) {
		t.Helper()
		keys, err := ListKeys(ctx, client, loc, "")
		if err != nil {
			t.Fatal(err)
		}
		ups, err := client.ListMultipartUploads(ctx, &s3.ListMultipartUploadsInput{Bucket: aws.String("exports")})
		var ae smithy.APIError
		switch {
		case errors.As(err, &ae) && ae.ErrorCode() == "NoSuchUpload": // gofakes3's answer for a bucket that never had one
			return keys, 0
		case err != nil:
			t.Fatal(err)
		}
		return keys, len(ups.Uploads)
	}
	for _, size := range []int{100, 6 << 20} { // one part, two parts of 5 MiB
		w, err := store.Create(ctx, "data/00001.json.gz")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(bytes.Repeat([]byte("x"), size)); err != nil {
			t.Fatal(err)
		}
		if err := w.Abort(); err != nil {
			t.Errorf("abort after %d bytes: %v", size, err)
		}
		if keys, ups := left(); len(keys) != 0 || ups != 0 {
			t.Errorf("abort after %d bytes left objects %q and %d multipart uploads", size, keys, ups)
		}
	}
	// An interrupted export: the run's context is cancelled once the
	// multipart upload has begun, and the uploader's own abort, sent with
	// it, fails; Abort still leaves no upload.
	runCtx, cancel := context.WithCancel(ctx)
	w, err := store.Create(runCtx, "data/00003.json.gz")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(bytes.Repeat([]byte("x"), 6<<20)); err != nil {
		t.Fatal(err)
	}
	if err := testenv.Poll[struct{}]("the multipart upload to begin", time.Minute, nil, func() bool { _, ups := left(); return ups == 1 }); err != nil {
		t.Fatal(err)
	}
	cancel()
	if err := w.Abort(); err != nil {
		t.Errorf("abort after the run's context was cancelled: %v", err)
	}
	if keys, ups := left(); len(keys) != 0 || ups != 0 {
		t.Errorf("abort after the run's context was cancelled left objects %q and %d multipart uploads", keys, ups)
	}
	w, err = store.Create(ctx, "data/00002.json.gz")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write([]byte("whole")); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if keys, _ := left(); len(keys) != 1 {
		t.Fatalf("after Close: %q, want the object", keys)
	}
	if err := store.Remove(ctx, "data/00002.json.gz"); err != nil {
		t.Fatal(err)
	}
	if keys, _ := left(); len(keys) != 0 {
		t.Errorf("after Remove: %q, want nothing", keys)
	}
}

// An object of any size --object-size allows fits S3's 10,000 parts, each
// of 5 MiB to 5 GiB, with room to spare; an object of 100 GiB took 5 MiB
// parts, 20,480 of them, and failed after uploading the first 10,000.
func TestPartSizeFitsTheObject(t *testing.T) {
	const maxParts, minPart, maxPart = 10_000, 5 << 20, 5 << 30
	for _, objectBytes := range []int64{1 << 20, DefaultObjectBytes, 48 << 30, 100 << 30, MaxObjectBytes} {
		part := NewStore(nil, Location{Bucket: "b"}, objectBytes).(*S3).PartSize
		if parts := (objectBytes + part - 1) / part; part < minPart || part > maxPart || parts > maxParts*9/10 {
			t.Errorf("an object of %d bytes: parts of %d bytes, %d of them; want 5 MiB to 5 GiB, at most 9,000", objectBytes, part, parts)
		}
	}
}
