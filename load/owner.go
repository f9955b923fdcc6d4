package load

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
)

// A table that stays yours: a mapping's table carries its name, hash and types
// as tags, checked (or an untagged table sampled) before a run writes.
// https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Tagging.html

// Tag keys of a table pg2dynamo created (TagResource).
const (
	// TagName is the mapping's declared name (mapping.Mapping.Name).
	TagName = "pg2dynamo:name"
	// TagMappingHash is the first 16 hex digits of the mapping file's SHA-256.
	TagMappingHash = "pg2dynamo:mapping-sha256"
	// TagTypes is the sorted entity types, space-separated, when they fit.
	TagTypes = "pg2dynamo:types"
	// TagMapping is an older pg2dynamo's tag (the file's base name), for TagName.
	TagMapping = "pg2dynamo:mapping"
	// TagEvolving marks a table partway through a new mapping version: set
	// before it writes anything, emptied with the new TagMappingHash.
	TagEvolving = "pg2dynamo:evolving"
)

// Evolving is a table's TagEvolving: the version whose SHA-256 begins From is
// being replaced by To's; only a run applying one over the other may write.
type Evolving struct{ From, To string }

// Between reports whether e is a change between versions a and b, either way.
func (e Evolving) Between(a, b string) bool {
	return (e.From == a && e.To == b) || (e.From == b && e.To == a)
}

// String is e as TagEvolving's value: "FROM TO".
func (e Evolving) String() string { return e.From + " " + e.To }

// EvolvingOf is the change tags record as under way; an empty tag is none.
func EvolvingOf(tags map[string]string) (Evolving, bool) {
	from, to, ok := strings.Cut(tags[TagEvolving], " ")
	return Evolving{From: from, To: to}, ok && from != "" && to != ""
}

// MarkEvolving tags the table of ARN arn as partway through e.
func MarkEvolving(ctx context.Context, client OwnerAPI, arn string, e Evolving) error {
	return tagTable(ctx, client, arn, []types.Tag{{Key: aws.String(TagEvolving), Value: aws.String(e.String())}})
}

// Owner is the mapping a table belongs to: name, SHA-256 prefix and entity
// types; File (Name "") comes from an older pg2dynamo's TagMapping.
type Owner struct {
	Name, Hash string
	Types      []string
	File       string
}

// maxTagValue is the longest tag value DynamoDB takes, in characters.
const maxTagValue = 256

// tagValueRE is the characters DynamoDB takes in a tag value.
var tagValueRE = regexp.MustCompile(`^[\p{L}\p{Z}\p{N}_.:/=+\-@]*$`)

// Tags are o's tags: TagName, TagMappingHash and, when they fit, TagTypes.
func (o Owner) Tags() []types.Tag {
	tags := []types.Tag{{Key: aws.String(TagName), Value: aws.String(o.Name)}, {Key: aws.String(TagMappingHash), Value: aws.String(o.Hash)}}
	if v, ok := o.typesValue(); ok {
		tags = append(tags, types.Tag{Key: aws.String(TagTypes), Value: aws.String(v)})
	}
	return tags
}

// typesValue is o.Types as TagTypes' value, and whether it fits a tag value.
func (o Owner) typesValue() (string, bool) {
	v := strings.Join(o.Types, " ")
	for _, t := range o.Types {
		if t == "" || strings.ContainsFunc(t, unicode.IsSpace) {
			return "", false
		}
	}
	return v, len(o.Types) > 0 && utf8.RuneCountInString(v) <= maxTagValue && tagValueRE.MatchString(v)
}

// Same reports whether a table tagged as other is o's: the same declared name
// (the hash does not decide: an edited mapping stays its own).
func (o Owner) Same(other Owner) bool { return o.Name != "" && o.Name == other.Name }

// String is "tickets (types Org, Ticket, User; SHA-256 0123456789abcdef…)".
func (o Owner) String() string {
	var parts []string
	if len(o.Types) > 0 {
		parts = append(parts, "types "+strings.Join(o.Types, ", "))
	}
	if o.Hash != "" {
		parts = append(parts, "SHA-256 "+o.Hash+"…")
	}
	name := o.Name
	if name == "" {
		name = "file " + o.File
	}
	if len(parts) == 0 {
		return name
	}
	return name + " (" + strings.Join(parts, "; ") + ")"
}

// OwnerAPI is what the tag functions call: *dynamodb.Client.
type OwnerAPI interface {
	TagResource(ctx context.Context, in *dynamodb.TagResourceInput, opts ...func(*dynamodb.Options)) (*dynamodb.TagResourceOutput, error)
	UntagResource(ctx context.Context, in *dynamodb.UntagResourceInput, opts ...func(*dynamodb.Options)) (*dynamodb.UntagResourceOutput, error)
	ListTagsOfResource(ctx context.Context, in *dynamodb.ListTagsOfResourceInput, opts ...func(*dynamodb.Options)) (*dynamodb.ListTagsOfResourceOutput, error)
}

// ErrNoTags means the endpoint has no tagging: ownership cannot be recorded.
// TagTable, TagEvolved, TableTags and WriteLease fail with it there.
var ErrNoTags = errors.New("the DynamoDB endpoint does not support TagResource and ListTagsOfResource")

func noTags(err error) error {
	var ae smithy.APIError
	if errors.As(err, &ae) && strings.Contains(ae.ErrorCode(), "UnknownOperation") {
		return fmt.Errorf("%w: %v", ErrNoTags, err)
	}
	return err
}

// TagTable tags the table of ARN arn as o's, replacing same-key tags.
func TagTable(ctx context.Context, client OwnerAPI, arn string, o Owner) error {
	return tagTable(ctx, client, arn, o.Tags())
}

// TagEvolved tags the table as o's and empties TagEvolving in one TagResource,
// so no reader sees the new hash with the change under way, or the reverse.
func TagEvolved(ctx context.Context, client OwnerAPI, arn string, o Owner) error {
	return tagTable(ctx, client, arn, append(o.Tags(), types.Tag{Key: aws.String(TagEvolving), Value: aws.String("")}))
}

// UpgradeTags replaces an older pg2dynamo's TagMapping by o's tags.
func UpgradeTags(ctx context.Context, client OwnerAPI, arn string, o Owner) error {
	if err := TagTable(ctx, client, arn, o); err != nil {
		return err
	}
	return untagTable(ctx, client, arn, TagMapping)
}

func tagTable(ctx context.Context, client OwnerAPI, arn string, tags []types.Tag) error {
	if _, err := client.TagResource(ctx, &dynamodb.TagResourceInput{ResourceArn: aws.String(arn), Tags: tags}); err != nil {
		return fmt.Errorf("tag table %s: %w", arn, noTags(err))
	}
	return nil
}

func untagTable(ctx context.Context, client OwnerAPI, arn string, keys ...string) error {
	if _, err := client.UntagResource(ctx, &dynamodb.UntagResourceInput{ResourceArn: aws.String(arn), TagKeys: keys}); err != nil {
		return fmt.Errorf("untag table %s: %w", arn, noTags(err))
	}
	return nil
}

// TableTags returns every tag of the table of ARN arn, by key.
func TableTags(ctx context.Context, client OwnerAPI, arn string) (map[string]string, error) {
	tags := map[string]string{}
	var next *string
	for {
		out, err := client.ListTagsOfResource(ctx, &dynamodb.ListTagsOfResourceInput{ResourceArn: aws.String(arn), NextToken: next})
		if err != nil {
			return nil, fmt.Errorf("tags of table %s: %w", arn, noTags(err))
		}
		for _, t := range out.Tags {
			tags[aws.ToString(t.Key)] = aws.ToString(t.Value)
		}
		if next = out.NextToken; next == nil {
			return tags, nil
		}
	}
}

// OwnerOf is the owner tags hold, and whether they name one.
func OwnerOf(tags map[string]string) (Owner, bool) {
	o := Owner{Name: tags[TagName], Hash: tags[TagMappingHash], File: tags[TagMapping]}
	if v := tags[TagTypes]; v != "" {
		o.Types = strings.Fields(v)
	}
	return o, o.Name != "" || o.File != "" || o.Hash != ""
}

// TableOwner returns the owner the table of ARN arn is tagged with, if any.
func TableOwner(ctx context.Context, client OwnerAPI, arn string) (Owner, bool, error) {
	tags, err := TableTags(ctx, client, arn)
	if err != nil {
		return Owner{}, false, err
	}
	o, ok := OwnerOf(tags)
	return o, ok, nil
}

// ItemSample is a bounded Scan's find: items, count per type, whether more.
type ItemSample struct {
	Items  int
	ByType map[string]int
	More   bool
}

// SampleItems is the most items SampleTable reads.
const SampleItems = 1000

// SampleTable Scans up to SampleItems items of table, projected to typeAttr.
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
			s.ByType[StringAttr(it, typeAttr)]++
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

// TagsOfTable is TableTags of the table named name: nil, nil when it does not
// exist; ErrNoTags (wrapped) where the endpoint has no tagging.
func TagsOfTable(ctx context.Context, client *dynamodb.Client, name string) (map[string]string, error) {
	td, err := DescribeTable(ctx, client, name)
	if err != nil || td == nil {
		return nil, err
	}
	return TableTags(ctx, client, aws.ToString(td.TableArn))
}
