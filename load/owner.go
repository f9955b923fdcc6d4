package load

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
)

// A table that stays yours: the table a mapping created carries the
// mapping's name and hash as tags, and a run checks them (or, on an
// untagged table, a sample of its items) before it writes.
// https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Tagging.html

// Tag keys of a table pg2dynamo created (TagResource).
const (
	TagMapping     = "pg2dynamo:mapping"
	TagMappingHash = "pg2dynamo:mapping-sha256"
)

// Owner is the mapping a table belongs to: its name (the mapping file's
// base name without extension) and the SHA-256 of the file's content, the
// first 16 hex digits.
type Owner struct {
	Mapping, Hash string
}

// Tags are o's tags.
func (o Owner) Tags() []types.Tag {
	return []types.Tag{{Key: aws.String(TagMapping), Value: aws.String(o.Mapping)}, {Key: aws.String(TagMappingHash), Value: aws.String(o.Hash)}}
}

// Same reports whether a table tagged as other is o's: the same mapping
// name, or the same content under another name (a file renamed).
func (o Owner) Same(other Owner) bool { return o.Mapping == other.Mapping || o.Hash == other.Hash }

// OwnerAPI is what TagTable and TableOwner call: *dynamodb.Client.
type OwnerAPI interface {
	TagResource(ctx context.Context, in *dynamodb.TagResourceInput, opts ...func(*dynamodb.Options)) (*dynamodb.TagResourceOutput, error)
	ListTagsOfResource(ctx context.Context, in *dynamodb.ListTagsOfResourceInput, opts ...func(*dynamodb.Options)) (*dynamodb.ListTagsOfResourceOutput, error)
}

// ErrNoTags is returned when the endpoint has no tagging API (an
// UnknownOperationException): ownership cannot be recorded or checked.
var ErrNoTags = errors.New("the DynamoDB endpoint does not support TagResource and ListTagsOfResource")

// noTags makes an unknown operation ErrNoTags.
func noTags(err error) error {
	var ae smithy.APIError
	if errors.As(err, &ae) && strings.Contains(ae.ErrorCode(), "UnknownOperation") {
		return fmt.Errorf("%w: %v", ErrNoTags, err)
	}
	return err
}

// TagTable tags the table of ARN arn as o's.
func TagTable(ctx context.Context, client OwnerAPI, arn string, o Owner) error {
	_, err := client.TagResource(ctx, &dynamodb.TagResourceInput{ResourceArn: aws.String(arn), Tags: o.Tags()})
	if err != nil {
		return fmt.Errorf("tag table %s: %w", arn, noTags(err))
	}
	return nil
}

// TableOwner returns the owner the table of ARN arn is tagged with, and
// whether it is tagged at all.
func TableOwner(ctx context.Context, client OwnerAPI, arn string) (Owner, bool, error) {
	var o Owner
	var next *string
	tagged := false
	for {
		out, err := client.ListTagsOfResource(ctx, &dynamodb.ListTagsOfResourceInput{ResourceArn: aws.String(arn), NextToken: next})
		if err != nil {
			return o, false, fmt.Errorf("tags of table %s: %w", arn, noTags(err))
		}
		for _, t := range out.Tags {
			switch aws.ToString(t.Key) {
			case TagMapping:
				o.Mapping, tagged = aws.ToString(t.Value), true
			case TagMappingHash:
				o.Hash, tagged = aws.ToString(t.Value), true
			}
		}
		if next = out.NextToken; next == nil {
			return o, tagged, nil
		}
	}
}

// ItemSample is what a bounded Scan found in a table: the items read (at
// most SampleItems) and their count per value of the type attribute (""
// for items without one), and whether the table holds more.
type ItemSample struct {
	Items  int
	ByType map[string]int
	More   bool
}

// SampleItems is the most items SampleTable reads.
const SampleItems = 1000

// SampleTable reads up to SampleItems items of table, projected to
// typeAttr, with Scan: enough to say whether it holds items and of which
// types, for the cost of at most a few read units.
func SampleTable(ctx context.Context, client dynamodb.ScanAPIClient, table, typeAttr string) (ItemSample, error) {
	s := ItemSample{ByType: map[string]int{}}
	in := &dynamodb.ScanInput{TableName: aws.String(table), Limit: aws.Int32(SampleItems),
		ProjectionExpression: aws.String("#t"), ExpressionAttributeNames: map[string]string{"#t": typeAttr}}
	for s.Items < SampleItems {
		out, err := client.Scan(ctx, in)
		if err != nil {
			return s, fmt.Errorf("sample table %s: %w", table, err)
		}
		for _, it := range out.Items {
			t := ""
			if v, ok := it[typeAttr].(*types.AttributeValueMemberS); ok {
				t = v.Value
			}
			s.ByType[t]++
			s.Items++
		}
		if len(out.LastEvaluatedKey) == 0 {
			return s, nil
		}
		in.ExclusiveStartKey = out.LastEvaluatedKey
	}
	s.More = true
	return s, nil
}

// String is "1000 or more items: 900 of type A, 100 without a type".
func (s ItemSample) String() string {
	var parts []string
	for _, t := range slices.Sorted(maps.Keys(s.ByType)) {
		if t == "" {
			parts = append(parts, fmt.Sprintf("%d without a type", s.ByType[t]))
		} else {
			parts = append(parts, fmt.Sprintf("%d of type %s", s.ByType[t], t))
		}
	}
	n := fmt.Sprintf("%d items", s.Items)
	if s.More {
		n = fmt.Sprintf("%d or more items (a sample of %d)", s.Items, s.Items)
	}
	return n + ": " + strings.Join(parts, ", ")
}
