package engine

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/pg2dynamo/pg2dynamo/export"
	"github.com/pg2dynamo/pg2dynamo/pipeline"
	"github.com/pg2dynamo/pg2dynamo/report"
)

// Export runs the full load into DynamoDB JSON objects at o.To (S3 or a
// directory) for DynamoDB's import from S3, writing the manifest last; a failed
// export removes what it wrote. Rejected rows are KindRejected; a destination
// holding other objects, KindRefused.
func Export(ctx context.Context, cfg Config, o ExportOptions) error {
	j := newJob(ctx, cfg, "export")
	j.mig.LoadOptions = o.LoadOptions
	j.exp = o
	loc, compression, shard, path := o.To, o.Compression, o.Shard, cfg.Mapping
	prog, closeProg := j.loadProgress()
	defer closeProg()
	op, err := j.begin(opening{rejects: true})
	if err != nil {
		return err
	}
	defer op.close()
	s, rejects := op.s, op.rejects
	var client *s3.Client
	if loc.Dir == "" {
		if client, err = s3Client(j); err != nil {
			return err
		}
	} else if err := os.MkdirAll(loc.Dir, 0o755); err != nil {
		return refused(fmt.Errorf("%s %s: %w", j.opt(OptTo), loc, err))
	}
	opts := export.Options{ObjectBytes: j.exp.ObjectSize, Slots: j.exp.Objects, Compression: compression}
	store := export.NewStore(client, loc, opts.ObjectBytes)
	if err := beginSnapshot(j, s); err != nil {
		return err
	}
	manifestKey := export.ManifestKey
	if shard.On() {
		// Shards' objects share data/, which an import reads whole; each has
		// its own manifest.
		tag := export.ShardTag(shard.Index, shard.Count)
		opts.Prefix, manifestKey = tag+"-", "manifest-"+tag+".json"
	}
	man := &export.Manifest{Format: "DYNAMODB_JSON", Compression: compression, Table: s.m.Table.Name,
		PartitionKey: s.m.Table.PartitionKey, SortKey: s.m.Table.SortKey, Source: s.src.Name()}
	if err := s.src.Conn().QueryRow(ctx, "SELECT now()").Scan(&man.SnapshotTime); err != nil {
		return fmt.Errorf("snapshot time: %w", err)
	}
	if man.MappingHash, err = fileSHA256(path); err != nil {
		return err
	}
	if shard.On() {
		man.Shard = shard.String()
	}
	man.Snapshot = j.ld.Snapshot
	if err := checkFreshDestination(j, store, loc, shard); err != nil {
		return err
	}
	sink, err := export.NewSink(ctx, store, len(s.plans), opts)
	if err != nil {
		return err
	}
	if err := rejects.Start(); err != nil {
		return err
	}
	fmt.Fprintf(j.log, "exporting %d entities from %s to %s\n", len(s.plans), s.src.Name(), loc)
	describeDuplicateCheck(j, s)
	sum, runErr := pipeline.Run(ctx, pipeline.Postgres(s.src), s.m, s.plans, sink, pipeline.Options{
		Concurrency: j.exp.Concurrency, Auto: j.exp.Auto,
		OnReject: rejects.Write, Progress: prog, Readers: j.ld.Readers, MinRangeRows: j.ld.MinRangeRows, SkipDuplicateCheck: j.ld.NoDuplicateCheck,
		Shard: shard,
	})
	closeProg()
	if sum != nil {
		j.summary(sum, nil)
	}
	if runErr != nil {
		return abortExport(j, sink, loc, runErr)
	}
	if err := completeExport(j, s, sink, sum, man, store, manifestKey); err != nil {
		return abortExport(j, sink, loc, err)
	}
	return finishExport(j, man, store, loc, manifestKey, rejects)
}

// abortExport removes a failed export's objects, so it can run again in the
// same place; it returns err and what could not be removed.
func abortExport(j *job, sink *export.Sink, loc export.Location, err error) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(j.ctx), abortTimeout)
	defer cancel()
	left, aerr := sink.Abort(ctx)
	if aerr != nil {
		return errors.Join(err, fmt.Errorf("removing what the export wrote failed, %s left at %s (%s): delete them before running it again: %w",
			report.Count(len(left), "object", "objects"), loc, strings.Join(head(left, 3), ", "), aerr))
	}
	fmt.Fprintf(j.log, "export failed; what it wrote to %s is removed: run it again once the cause is fixed\n", loc)
	return err
}

const abortTimeout = time.Minute

func completeExport(j *job, s *session, sink *export.Sink, sum *pipeline.Summary, man *export.Manifest,
	store export.Store, manifestKey string) error {
	objects, perEntity, err := sink.Close()
	if err != nil {
		return err
	}
	man.Objects = objects
	for i, p := range s.plans {
		man.Entities = append(man.Entities, export.EntityItems{Entity: p.Entity().Name, Type: p.Entity().Type, Items: perEntity[i]})
	}
	man.Sum()
	man.Rejected = sum.Total().Rejected
	man.Finished = time.Now().UTC()
	return man.Write(j.ctx, store, manifestKey)
}

func finishExport(j *job, man *export.Manifest, store export.Store, loc export.Location, manifestKey string, rejects *rejectFile) error {
	fmt.Fprintf(j.out, "exported %d items in %d objects (%s of DynamoDB JSON, %s %s) to %s; manifest %s\n",
		man.Items, len(man.Objects), mib(man.Bytes), mib(man.Stored), strings.ToLower(man.Compression), loc, store.URL(manifestKey))
	if err := rejects.Close(); err != nil {
		return err
	}
	if man.Rejected > 0 {
		return rejected(fmt.Errorf("%d rows rejected: see %s", man.Rejected, rejects.path))
	}
	return nil
}

// checkFreshDestination refuses a location holding objects this export would be
// mixed with: an import reads all of data/.
func checkFreshDestination(j *job, store export.Store, loc export.Location, shard pipeline.Shard) error {
	found, err := export.Conflicts(j.ctx, store, shard.Index, shard.Count)
	if err != nil {
		return err
	}
	if len(found) == 0 {
		return nil
	}
	var temporary string
	if slices.ContainsFunc(found, export.IsTemporary) {
		temporary = " (a name beginning with a dot is the temporary file of an export under way, or killed)"
	}
	return refused(fmt.Errorf("%s %s already holds %s (%s)%s: an import loads every object under %s, so each export goes to a prefix of its own, shared only by the other shards of its split; export to a new one, or delete these first",
		j.opt(OptTo), loc, report.Count(len(found), "object", "objects"), strings.Join(head(found, 3), ", "), temporary, export.DataPrefix))
}

func head(ss []string, n int) []string {
	if len(ss) <= n {
		return ss
	}
	return append(slices.Clone(ss[:n]), "…")
}

func mib(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }

func fileSHA256(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%x", sha256.Sum256(b)), nil
}

// s3Client is the S3 client of the AWS options.
func s3Client(j *job) (*s3.Client, error) {
	return export.NewS3Client(j.ctx, export.S3Config{Region: j.cfg.AWS.Region, Profile: j.cfg.AWS.Profile,
		EndpointURL: j.cfg.AWS.S3EndpointURL})
}
