package export

import (
	"bufio"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/pg2dynamo/pg2dynamo/ddbjson"
	"github.com/pg2dynamo/pg2dynamo/load"
	"github.com/pg2dynamo/pg2dynamo/mapping"
)

// DataPrefix is the key prefix of an export's data objects, what an import
// reads (the manifests beside it are not data).
const DataPrefix = "data/"

// ImportTableInput is the ImportTable request creating m's table from the
// export at loc, with the key schema, GSIs, billing mode and on-demand
// throughput CreateTable gets (load.CreateTableInput); other settings follow
// after import (load.AfterImportInputs). The SDK makes the ClientToken, kept
// across retries.
// https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_ImportTable.html
func ImportTableInput(m *mapping.Mapping, loc Location, compression string) *dynamodb.ImportTableInput {
	ct := load.CreateTableInput(m)
	return &dynamodb.ImportTableInput{
		InputFormat:          types.InputFormatDynamodbJson,
		InputCompressionType: types.InputCompressionType(compression),
		S3BucketSource:       &types.S3BucketSource{S3Bucket: aws.String(loc.Bucket), S3KeyPrefix: aws.String(loc.Prefix + DataPrefix)},
		TableCreationParameters: &types.TableCreationParameters{
			TableName: ct.TableName, KeySchema: ct.KeySchema, AttributeDefinitions: ct.AttributeDefinitions,
			BillingMode: ct.BillingMode, ProvisionedThroughput: ct.ProvisionedThroughput, GlobalSecondaryIndexes: ct.GlobalSecondaryIndexes,
			OnDemandThroughput: ct.OnDemandThroughput,
		},
	}
}

// BulkPut tunes a StartBulkPutItems request.
type BulkPut struct {
	// Report is where DynamoDB writes the items it could not write.
	Report Location
	// MaxWriteUnits caps write request units a second (0: none; at least
	// 1,024).
	MaxWriteUnits int64
	// Tier is STANDARD (the default) or ACCELERATED.
	Tier string
}

// MinBulkWriteUnits is the least MaxWriteRequestUnits StartBulkPutItems takes.
// https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_StartBulkPutItems.html
const MinBulkWriteUnits = 1024

// StartBulkPutItemsInput loads the export at loc into m's existing table.
// https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_StartBulkPutItems.html
func StartBulkPutItemsInput(m *mapping.Mapping, loc Location, compression string, bp BulkPut) *dynamodb.StartBulkPutItemsInput {
	in := &dynamodb.StartBulkPutItemsInput{
		TableName: aws.String(m.Table.Name),
		InputS3Configuration: &types.InputS3Configuration{
			S3Bucket: aws.String(loc.Bucket), S3KeyPrefix: aws.String(loc.Prefix + DataPrefix),
			InputFormat: types.BulkOperationInputFormatDynamodbJson, InputCompressionType: types.InputCompressionType(compression),
		},
		OutputS3Configuration: &types.OutputS3Configuration{
			S3Bucket: aws.String(bp.Report.Bucket), S3KeyPrefix: aws.String(bp.Report.Prefix),
			OutputType: []types.OutputTypeEnum{types.OutputTypeEnumError},
		},
	}
	if bp.MaxWriteUnits > 0 {
		in.MaxWriteRequestUnits = aws.Int64(bp.MaxWriteUnits)
	}
	if bp.Tier != "" {
		in.PerformanceTier = types.BulkOperationPerformanceTier(bp.Tier)
	}
	return in
}

// Manifests reads every manifest at loc, in key order; none is an error.
func Manifests(ctx context.Context, client *s3.Client, loc Location) ([]*Manifest, error) {
	keys, err := ListKeys(ctx, client, loc, "manifest")
	if err != nil {
		return nil, err
	}
	var out []*Manifest
	for _, key := range keys {
		if !strings.HasSuffix(key, ".json") {
			continue
		}
		m, err := ReadManifest(ctx, client, loc, key)
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s holds no manifest.json: not an export, or one that did not finish", loc)
	}
	return out, nil
}

// Failed is one item DynamoDB reported it could not write.
type Failed struct {
	Item   map[string]types.AttributeValue
	Reason string
	// Line is the record as DynamoDB wrote it, when it holds no item.
	Line string
}

// Versions are the objects under a location as a listing shows them: key
// (after the location's prefix) to its version.
type Versions map[string]Version

// Version is an object's last-modified time and ETag.
type Version struct {
	Modified time.Time
	ETag     string
}

// ListVersions lists the objects under loc with their versions.
func ListVersions(ctx context.Context, client *s3.Client, loc Location) (Versions, error) {
	vs := Versions{}
	return vs, eachObject(ctx, client, loc, func(key string, v Version) error { vs[key] = v; return nil })
}

func eachObject(ctx context.Context, client *s3.Client, loc Location, fn func(key string, v Version) error) error {
	p := s3.NewListObjectsV2Paginator(client, &s3.ListObjectsV2Input{Bucket: aws.String(loc.Bucket), Prefix: aws.String(loc.Prefix)})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return fmt.Errorf("list %s: %w", loc, err)
		}
		for _, o := range page.Contents {
			if err := fn(strings.TrimPrefix(aws.ToString(o.Key), loc.Prefix), Version{aws.ToTime(o.LastModified), aws.ToString(o.ETag)}); err != nil {
				return err
			}
		}
	}
	return nil
}

// ReadReport reads a StartBulkPutItems report at loc, one JSON record a line:
// its "Item" (DynamoDB JSON) and its code and message as reason, read leniently
// (a record without an item keeps its line). Objects as earlier lists them
// (an earlier operation's report, not written again since) are not read.
// https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/BulkPutItems.Output.html
func ReadReport(ctx context.Context, client *s3.Client, loc Location, earlier Versions, fn func(Failed) error) error {
	return eachObject(ctx, client, loc, func(key string, v Version) error {
		if was, ok := earlier[key]; (ok && was.Modified.Equal(v.Modified) && was.ETag == v.ETag) || strings.Contains(strings.ToLower(key), "manifest") {
			return nil
		}
		return readReportObject(ctx, client, loc, key, fn)
	})
}

func readReportObject(ctx context.Context, client *s3.Client, loc Location, key string, fn func(Failed) error) error {
	r, err := Open(ctx, client, loc, key)
	if err != nil {
		return err
	}
	defer r.Close()
	body, err := decompressed(r, key)
	if err != nil {
		return err
	}
	sc := bufio.NewScanner(body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		f := Failed{Line: line}
		var rec map[string]json.RawMessage
		if json.Unmarshal([]byte(line), &rec) == nil {
			f.Reason = reason(rec)
			if raw, ok := rec["Item"]; ok {
				if item, err := ddbjson.DecodeItem(raw); err == nil {
					f.Item, f.Line = item, ""
				}
			}
		}
		if err := fn(f); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("%s%s: %w", loc, key, err)
	}
	return nil
}

// reason is a record's "code: message" from members named like them.
func reason(rec map[string]json.RawMessage) string {
	var code, msg []string
	for _, k := range slices.Sorted(maps.Keys(rec)) {
		var s string
		if json.Unmarshal(rec[k], &s) != nil || s == "" {
			continue
		}
		switch lk := strings.ToLower(k); {
		case strings.Contains(lk, "code"):
			code = append(code, s)
		case strings.Contains(lk, "message"), strings.Contains(lk, "reason"), strings.Contains(lk, "error"):
			msg = append(msg, s)
		}
	}
	parts := append(code, msg...)
	if len(code) > 0 && len(msg) > 0 {
		return strings.Join(code, ", ") + ": " + strings.Join(msg, "; ")
	}
	return strings.Join(parts, "; ")
}

func decompressed(r io.Reader, key string) (io.Reader, error) {
	if strings.HasSuffix(key, ".gz") {
		return gzip.NewReader(r)
	}
	return r, nil
}
