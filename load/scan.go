package load

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"golang.org/x/sync/errgroup"
)

// ScanPageItems bounds a Scan page (ScanInput.Limit): the SDK decodes a page at
// once, and a full page (1 MB) of small items is several times larger in Go
// values, per segment (docs/performance.md).
// https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Scan.html#Scan.Limit
const ScanPageItems = 200

// ScanSegments reads in's table with segments parallel, strongly consistent
// Scans of pages of ScanPageItems, calling page with each page's items on its
// segment's goroutine, so page must be safe for concurrent use. in is copied,
// not changed. The first error, a Scan's (wrapped with the table and segment)
// or page's, stops the others and is returned.
// https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Scan.html#Scan.ParallelScan
func ScanSegments(ctx context.Context, client dynamodb.ScanAPIClient, in *dynamodb.ScanInput, segments int, page func([]map[string]types.AttributeValue) error) error {
	g, gctx := errgroup.WithContext(ctx)
	for seg := range segments {
		g.Go(func() error {
			si := *in
			si.Segment, si.TotalSegments = aws.Int32(int32(seg)), aws.Int32(int32(segments))
			si.ConsistentRead, si.Limit = aws.Bool(true), aws.Int32(ScanPageItems)
			p := dynamodb.NewScanPaginator(client, &si)
			for p.HasMorePages() {
				out, err := p.NextPage(gctx)
				if err != nil {
					return fmt.Errorf("scan %s segment %d: %w", aws.ToString(in.TableName), seg, err)
				}
				if err := page(out.Items); err != nil {
					return err
				}
			}
			return nil
		})
	}
	return g.Wait()
}

// StringAttr is item's attribute name as a string: "" when it is absent or of
// another type than S.
func StringAttr(item map[string]types.AttributeValue, name string) string {
	if v, ok := item[name].(*types.AttributeValueMemberS); ok {
		return v.Value
	}
	return ""
}
