package export

import (
	"bufio"
	"context"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/klauspost/compress/gzip"

	"github.com/pg2dynamo/pg2dynamo/ddbjson"
	"github.com/pg2dynamo/pg2dynamo/transform"
)

// TestSinkConcurrentWriters has writers add items to few slots at once,
// over several shuffle buffers and object cuts, and reads the objects
// back: every item once, in the object its counts say.
func TestSinkConcurrentWriters(t *testing.T) {
	dir := t.TempDir()
	const writers, perWriter = 6, 4000
	s, err := NewSink(context.Background(), Dir{Path: dir}, [2]string{"PK", "SK"}, 2,
		Options{Slots: 3, ObjectBytes: 1 << 20})
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
		items, bytes := readObject(t, filepath.Join(dir, o.Key), seen)
		if items != o.Items || bytes != o.Bytes || o.Bytes > 1<<20 {
			t.Errorf("%s holds %d items, %d bytes; its record says %d, %d (bound 1 MiB)", o.Key, items, bytes, o.Items, o.Bytes)
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

// readObject counts the lines of a gzip object and their bytes, and each
// item's key in seen.
func readObject(t *testing.T, path string, seen map[string]int) (items, bytes int64) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(zr)
	for sc.Scan() {
		item, err := ddbjson.DecodeLine(sc.Bytes())
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		k := transform.ItemKey(item, [2]string{"PK", "SK"})
		seen[k[0]+"/"+k[1]]++
		items++
		bytes += int64(len(sc.Bytes()) + 1)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return items, bytes
}

// TestKeyHashIsFNV1a: objects are chosen by hash/fnv's FNV-1a of the key.
func TestKeyHashIsFNV1a(t *testing.T) {
	for _, k := range [][2]string{{"", ""}, {"USER#1", ""}, {"ORG#0000000406", "USER#0000000000000046714"}, {"é", "\x00"}} {
		h := fnv.New64a()
		h.Write([]byte(k[0]))
		h.Write([]byte{0})
		h.Write([]byte(k[1]))
		if got, want := keyHash(k), h.Sum64(); got != want {
			t.Errorf("keyHash(%q) = %x, hash/fnv %x", k, got, want)
		}
	}
}
