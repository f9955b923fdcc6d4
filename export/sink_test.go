package export

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"

	"github.com/pg2dynamo/pg2dynamo/ddbjson"
	"github.com/pg2dynamo/pg2dynamo/transform"
)

// TestSinkConcurrentWriters has writers add items to few slots at once,
// over several shuffle buffers and object cuts, and reads the objects
// back: every item once, in the object its counts say, in each
// compression ("" the default, GZIP).
func TestSinkConcurrentWriters(t *testing.T) {
	for _, c := range []string{"", ZSTD, NONE} {
		t.Run("compression="+c, func(t *testing.T) { testSinkConcurrentWriters(t, c) })
	}
}

func testSinkConcurrentWriters(t *testing.T, compression string) {
	dir := t.TempDir()
	const writers, perWriter = 6, 4000
	s, err := NewSink(context.Background(), Dir{Path: dir}, 2,
		Options{Slots: 3, ObjectBytes: 1 << 20, Compression: compression})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var batch []transform.Item
			for i := range perWriter {
				pk := fmt.Sprintf("W#%d", w)
				batch = append(batch, transform.Item{Entity: i % 2, Attrs: map[string]types.AttributeValue{
					"PK": &types.AttributeValueMemberS{Value: pk}, "SK": &types.AttributeValueMemberS{Value: fmt.Sprintf("I#%06d", i)},
					"body": &types.AttributeValueMemberS{Value: fmt.Sprintf("%0200d", i)}}})
				if len(batch) == 25 {
					if err := s.Write(context.Background(), batch); err != nil {
						errs <- err
						return
					}
					batch = nil
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	objects, perEntity, err := s.Close()
	if err != nil {
		t.Fatal(err)
	}
	if total := perEntity[0] + perEntity[1]; total != writers*perWriter || perEntity[0] != perEntity[1] {
		t.Errorf("items per entity %v, want %d each", perEntity, writers*perWriter/2)
	}
	if len(objects) <= 3 {
		t.Errorf("%d objects: want the 1 MiB bound to cut more than one per slot", len(objects))
	}
	seen := map[string]int{}
	for _, o := range objects {
		items, size := readObject(t, filepath.Join(dir, o.Key), compression, seen)
		if items != o.Items || size != o.Bytes || o.Bytes > 1<<20 {
			t.Errorf("%s holds %d items, %d bytes; its record says %d, %d (bound 1 MiB)", o.Key, items, size, o.Items, o.Bytes)
		}
	}
	if len(seen) != writers*perWriter {
		t.Errorf("%d distinct items read back, want %d", len(seen), writers*perWriter)
	}
	for k, n := range seen {
		if n != 1 {
			t.Errorf("item %s written %d times", k, n)
		}
	}
}

// readObject counts the lines of an object of compression ("": GZIP) and
// their bytes, and each item's key in seen. The object's name and first
// bytes must be those of its compression.
func readObject(t *testing.T, path, compression string, seen map[string]int) (items, size int64) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var r io.Reader = f
	head := make([]byte, 4)
	if _, err := io.ReadFull(f, head); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		t.Fatal(err)
	}
	switch compression {
	case ZSTD:
		if !strings.HasSuffix(path, ".json.zst") || !bytes.Equal(head, []byte{0x28, 0xb5, 0x2f, 0xfd}) {
			t.Fatalf("%s starts %x: want a zstd frame in a .json.zst", path, head)
		}
		zr, err := zstd.NewReader(f)
		if err != nil {
			t.Fatal(err)
		}
		defer zr.Close()
		r = zr
	case "", GZIP:
		if !strings.HasSuffix(path, ".json.gz") || !bytes.Equal(head[:2], []byte{0x1f, 0x8b}) {
			t.Fatalf("%s starts %x: want gzip in a .json.gz", path, head)
		}
		if r, err = gzip.NewReader(f); err != nil {
			t.Fatal(err)
		}
	default:
		if !strings.HasSuffix(path, ".json") || head[0] != '{' {
			t.Fatalf("%s starts %q: want a line of DynamoDB JSON in a .json", path, head)
		}
	}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		item, err := ddbjson.DecodeLine(sc.Bytes())
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		k := transform.ItemKey(item, [2]string{"PK", "SK"})
		seen[k[0]+"/"+k[1]]++
		items++
		size += int64(len(sc.Bytes()) + 1)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return items, size
}

// TestSinkSpreadsACollection writes one large item collection as the pipeline
// gives it, batch after batch from one writer: every open object holds an
// equal share of it, so a parallel import does not write its partition from
// one object alone.
func TestSinkSpreadsACollection(t *testing.T) {
	dir := t.TempDir()
	const slots, batches = 8, 40
	s, err := NewSink(context.Background(), Dir{Path: dir}, 1, Options{Slots: slots, Compression: NONE})
	if err != nil {
		t.Fatal(err)
	}
	for b := range batches {
		var batch []transform.Item
		for i := range 25 {
			batch = append(batch, transform.Item{Attrs: map[string]types.AttributeValue{
				"PK": &types.AttributeValueMemberS{Value: "USER#1"}, "SK": &types.AttributeValueMemberS{Value: fmt.Sprintf("T#%06d", b*25+i)}}})
		}
		if err := s.Write(context.Background(), batch); err != nil {
			t.Fatal(err)
		}
	}
	objects, _, err := s.Close()
	if err != nil {
		t.Fatal(err)
	}
	if len(objects) != slots {
		t.Fatalf("%d objects, want one a slot (%d)", len(objects), slots)
	}
	seen := map[string]int{}
	for _, o := range objects {
		if items, _ := readObject(t, filepath.Join(dir, o.Key), NONE, seen); items != batches*25/slots {
			t.Errorf("%s holds %d of the collection's %d items, want %d", o.Key, items, batches*25, batches*25/slots)
		}
	}
}
