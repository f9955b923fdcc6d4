package export

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/pg2dynamo/pg2dynamo/load"
)

// ManifestKey is the manifest's key, written last: a prefix without one holds
// an unfinished export.
const ManifestKey = "manifest.json"

// Manifest describes an export; it is written beside the data, as JSON.
type Manifest struct {
	// Format is DYNAMODB_JSON; Compression GZIP, ZSTD or NONE.
	Format      string `json:"format"`
	Compression string `json:"compression"`
	// Table is the mapping's table name; KeySchema its key attributes.
	Table        string    `json:"table"`
	PartitionKey string    `json:"partition_key"`
	SortKey      string    `json:"sort_key,omitempty"`
	MappingHash  string    `json:"mapping_sha256"`
	Source       string    `json:"source"`
	SnapshotTime time.Time `json:"snapshot_time"`
	// Snapshot is the exported snapshot read (--snapshot), the same for every
	// shard; empty when the export took its own.
	Snapshot string `json:"snapshot,omitempty"`
	// Shard is "i/N" for one shard of a split export (--shard).
	Shard    string        `json:"shard,omitempty"`
	Entities []EntityItems `json:"entities"`
	Items    int64         `json:"items"`
	Bytes    int64         `json:"bytes"`
	Stored   int64         `json:"compressed_bytes"`
	Objects  []Object      `json:"objects"`
	Rejected int64         `json:"rejected"`
	Finished time.Time     `json:"finished"`
}

// EntityItems counts one entity's items in an export.
type EntityItems struct {
	Entity string `json:"entity"`
	Type   string `json:"type"`
	Items  int64  `json:"items"`
}

// Sum sets Items, Bytes and Stored from the objects.
func (m *Manifest) Sum() {
	m.Items, m.Bytes, m.Stored = 0, 0, 0
	for _, o := range m.Objects {
		m.Items += o.Items
		m.Bytes += o.Bytes
		m.Stored += o.CompressedBytes
	}
}

// Write writes m as key of store (indented JSON).
func (m *Manifest) Write(ctx context.Context, store Store, key string) error {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	w, err := store.Create(ctx, key)
	if err != nil {
		return fmt.Errorf("manifest %s: %w", store.URL(key), err)
	}
	if _, err := w.Write(append(b, '\n')); err != nil {
		w.Abort() // not a manifest cut short
		return fmt.Errorf("manifest %s: %w", store.URL(key), err)
	}
	if err := w.Close(); err != nil {
		return fmt.Errorf("manifest %s: %w", store.URL(key), err)
	}
	return nil
}

// Open opens object key of a location for reading.
func Open(ctx context.Context, client *s3.Client, loc Location, key string) (io.ReadCloser, error) {
	if loc.Dir != "" {
		return os.Open(filepath.Join(loc.Dir, filepath.FromSlash(key)))
	}
	out, err := client.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(loc.Bucket), Key: aws.String(loc.Prefix + key)})
	if err != nil {
		return nil, fmt.Errorf("s3://%s/%s%s: %w", loc.Bucket, loc.Prefix, key, err)
	}
	return out.Body, nil
}

// ReadManifest reads the manifest key of a location.
func ReadManifest(ctx context.Context, client *s3.Client, loc Location, key string) (*Manifest, error) {
	r, err := Open(ctx, client, loc, key)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	b, err := io.ReadAll(r) // whole: the SDK checks the body's checksum at its end
	if err != nil {
		return nil, fmt.Errorf("manifest %s%s: %w", loc, key, err)
	}
	var m Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("manifest %s%s: %w", loc, key, err)
	}
	return &m, nil
}

// S3Config configures the S3 client; an endpoint means path-style addressing.
type S3Config struct {
	Region, Profile, EndpointURL string
}

// NewS3Client builds an S3 client from the default credential chain; it fails
// without a region or credentials.
func NewS3Client(ctx context.Context, sc S3Config) (*s3.Client, error) {
	cfg, err := load.AWSConfig(ctx, sc.Region, sc.Profile)
	if err != nil {
		return nil, err
	}
	return s3.NewFromConfig(cfg, func(o *s3.Options) {
		if sc.EndpointURL != "" {
			o.BaseEndpoint = aws.String(sc.EndpointURL)
			o.UsePathStyle = true
		}
	}), nil
}

// NewStore returns loc's store: S3 through client (PartSize(objectBytes)), or the directory.
func NewStore(client *s3.Client, loc Location, objectBytes int64) Store {
	if loc.Dir != "" {
		return Dir{Path: loc.Dir}
	}
	return &S3{Client: client, Loc: loc, PartSize: PartSize(objectBytes)}
}
