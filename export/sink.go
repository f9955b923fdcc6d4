package export

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"

	"github.com/pg2dynamo/pg2dynamo/ddbjson"
	"github.com/pg2dynamo/pg2dynamo/transform"
)

// Compressions an export writes, as InputCompressionType names them.
const (
	GZIP = "GZIP"
	ZSTD = "ZSTD"
	NONE = "NONE"
)

// Limits of an export.
const (
	// MaxObjects is the most objects one ImportTable reads.
	// https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/S3DataImport.Validation.html
	MaxObjects = 50_000
	// DefaultObjectBytes bounds an object's DynamoDB JSON before compression.
	DefaultObjectBytes = 256 << 20
	// DefaultSlots is the number of objects written at a time.
	DefaultSlots = 8
	// shuffleBytes is how much a slot holds before it shuffles and writes it.
	shuffleBytes = 128 << 10
)

// Options tune a Sink. The zero value is usable.
type Options struct {
	// ObjectBytes bounds each object's DynamoDB JSON before compression
	// (default DefaultObjectBytes); an item is never split.
	ObjectBytes int64
	// Slots is the objects open at a time, fed in turn (default DefaultSlots).
	Slots int
	// Compression is GZIP (the default), ZSTD or NONE.
	Compression string
	// Prefix goes before every object's name under data/ ("shard-1-of-3-").
	Prefix string
}

// Object is one object written: key, items, and bytes as JSON and as stored.
type Object struct {
	Key             string `json:"key"`
	Items           int64  `json:"items"`
	Bytes           int64  `json:"bytes"`
	CompressedBytes int64  `json:"compressed_bytes"`
}

// Sink is a load.Sink writing DynamoDB JSON objects to a Store. Batches go to
// Slots open objects in turn, and each slot shuffles its items 128 KiB at a
// time, so the items the pipeline gives in key order are spread over the
// objects and through each, and a parallel import writes across the table's
// partitions, not through them in key order (AWS's import guidance). Write is safe for concurrent use. Items are in
// objects only once Close returns nil; a failed export calls Abort instead.
type Sink struct {
	ctx      context.Context // of the uploads
	store    Store
	opts     Options
	slots    []*slot
	turn     atomic.Uint64 // batches given a slot so far
	mu       sync.Mutex    // guards objects and next
	objects  []Object
	next     int     // the number of the next object
	entities []int64 // items per entity index, summed by Close
}

// NewSink returns a sink into store; ctx bounds uploads, which outlive Writes.
func NewSink(ctx context.Context, store Store, entities int, opts Options) (*Sink, error) {
	if opts.ObjectBytes <= 0 {
		opts.ObjectBytes = DefaultObjectBytes
	}
	if opts.Slots <= 0 {
		opts.Slots = DefaultSlots
	}
	switch opts.Compression {
	case "":
		opts.Compression = GZIP
	case GZIP, ZSTD, NONE:
	default:
		return nil, fmt.Errorf("compression %q: expected GZIP, ZSTD or NONE", opts.Compression)
	}
	s := &Sink{ctx: ctx, store: store, opts: opts, entities: make([]int64, entities)}
	for i := range opts.Slots {
		s.slots = append(s.slots, &slot{s: s, rng: rand.New(rand.NewPCG(uint64(i), 0x9e3779b97f4a7c15)), entities: make([]int64, entities)})
	}
	return s, nil
}

// Write adds batch's items to the next slot in turn, so that concurrent
// writers rarely meet on one slot's lock (nor wait on its compressor); an
// export refuses deletes.
func (s *Sink) Write(ctx context.Context, batch []transform.Item) error {
	sl := s.slots[(s.turn.Add(1)-1)%uint64(len(s.slots))]
	sl.mu.Lock()
	defer sl.mu.Unlock()
	for _, it := range batch {
		if it.Delete {
			return errors.New("export: a delete cannot be exported")
		}
		if err := sl.add(it); err != nil {
			return err
		}
	}
	return nil
}

// Close writes out every slot and completes its object; it returns the objects
// in key order and the items per entity.
func (s *Sink) Close() ([]Object, []int64, error) {
	var errs []error
	for _, sl := range s.slots {
		sl.mu.Lock()
		err := sl.flush()
		if err == nil {
			err = sl.closeObject()
		}
		for e, n := range sl.entities {
			s.entities[e] += n
		}
		sl.mu.Unlock()
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	slices.SortFunc(s.objects, func(a, b Object) int { return strings.Compare(a.Key, b.Key) })
	return s.objects, s.entities, nil
}

// Abort ends a failed export in place of Close, once no Write is under way: it
// discards open objects and removes completed ones, so the store holds nothing
// of the export. left are the keys it could not remove, err says why.
func (s *Sink) Abort(ctx context.Context) (left []string, err error) {
	var errs []error
	for _, sl := range s.slots {
		sl.mu.Lock()
		if sl.out != nil {
			if aerr := sl.out.Abort(); aerr != nil {
				left, errs = append(left, sl.obj.Key), append(errs, fmt.Errorf("%s: %w", s.store.URL(sl.obj.Key), aerr))
			}
			sl.out = nil
		}
		sl.mu.Unlock()
	}
	s.mu.Lock()
	objects := s.objects
	s.objects = nil
	s.mu.Unlock()
	for _, o := range objects {
		if rerr := s.store.Remove(ctx, o.Key); rerr != nil {
			left, errs = append(left, o.Key), append(errs, rerr)
		}
	}
	slices.Sort(left)
	return left, errors.Join(errs...)
}

func (s *Sink) newObject() (Writer, string, error) {
	s.mu.Lock()
	s.next++
	n := s.next
	s.mu.Unlock()
	if n > MaxObjects {
		return nil, "", fmt.Errorf("export: over %d objects, the most one import reads: raise --object-size", MaxObjects)
	}
	ext := map[string]string{GZIP: ".json.gz", ZSTD: ".json.zst", NONE: ".json"}[s.opts.Compression]
	key := fmt.Sprintf("data/%s%05d%s", s.opts.Prefix, n, ext)
	w, err := s.store.Create(s.ctx, key)
	if err != nil {
		return nil, "", fmt.Errorf("export: %s: %w", s.store.URL(key), err)
	}
	return w, key, nil
}

// slot is one open object and the items waiting to be shuffled into it.
type slot struct {
	s        *Sink
	mu       sync.Mutex
	enc      ddbjson.LineEncoder
	rng      *rand.Rand
	lines    [][]byte // encoded, waiting
	buf      []byte   // their bytes
	entities []int64

	// The open object, a buffer over it (the compressor writes a few hundred
	// bytes at a time), the compressor, the writer over it, and counts.
	out    Writer
	outBuf *bufio.Writer
	stored *countingWriter
	comp   io.WriteCloser
	bw     *bufio.Writer
	obj    Object
}

// add encodes it into the slot, with sl.mu held.
func (sl *slot) add(it transform.Item) error {
	start := len(sl.buf)
	var err error
	if sl.buf, err = sl.enc.AppendLine(sl.buf, it.Attrs); err != nil {
		sl.buf = sl.buf[:start] // no part of a line the object cannot read
		return err
	}
	sl.lines = append(sl.lines, sl.buf[start:len(sl.buf):len(sl.buf)])
	if it.Entity >= 0 && it.Entity < len(sl.entities) {
		sl.entities[it.Entity]++
	}
	if len(sl.buf) >= shuffleBytes {
		return sl.flush()
	}
	return nil
}

// flush writes the waiting lines in random order.
func (sl *slot) flush() error {
	sl.rng.Shuffle(len(sl.lines), func(i, j int) { sl.lines[i], sl.lines[j] = sl.lines[j], sl.lines[i] })
	for _, line := range sl.lines {
		if sl.out != nil && sl.obj.Bytes+int64(len(line)) > sl.s.opts.ObjectBytes {
			if err := sl.closeObject(); err != nil {
				return err
			}
		}
		if sl.out == nil {
			if err := sl.openObject(); err != nil {
				return err
			}
		}
		if _, err := sl.bw.Write(line); err != nil {
			return fmt.Errorf("export: %s: %w", sl.s.store.URL(sl.obj.Key), err)
		}
		sl.obj.Items++
		sl.obj.Bytes += int64(len(line))
	}
	sl.lines, sl.buf = sl.lines[:0], sl.buf[:0]
	return nil
}

func (sl *slot) openObject() error {
	out, key, err := sl.s.newObject()
	if err != nil {
		return err
	}
	sl.out, sl.obj = out, Object{Key: key}
	sl.outBuf = bufio.NewWriterSize(out, 32<<10)
	sl.stored = &countingWriter{w: sl.outBuf}
	// The fastest levels: an import is priced by the uncompressed size, so more
	// compression saves only S3 bytes, at far more CPU.
	switch sl.s.opts.Compression {
	case GZIP:
		if sl.comp, err = gzip.NewWriterLevel(sl.stored, gzip.BestSpeed); err != nil {
			return err
		}
	case ZSTD:
		if sl.comp, err = zstd.NewWriter(sl.stored, zstd.WithEncoderConcurrency(1), zstd.WithWindowSize(1<<20),
			zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithLowerEncoderMem(true)); err != nil {
			return err
		}
	default:
		sl.comp = nopCloser{sl.stored}
	}
	sl.bw = bufio.NewWriterSize(sl.comp, 32<<10)
	return nil
}

func (sl *slot) closeObject() error {
	if sl.out == nil {
		return nil
	}
	err := sl.bw.Flush()
	if cerr := sl.comp.Close(); err == nil {
		err = cerr
	}
	if ferr := sl.outBuf.Flush(); err == nil {
		err = ferr
	}
	if err == nil {
		err = sl.out.Close()
	} else {
		sl.out.Abort() // not an object cut short
	}
	sl.out = nil
	if err != nil {
		return fmt.Errorf("export: %s: %w", sl.s.store.URL(sl.obj.Key), err)
	}
	sl.obj.CompressedBytes = sl.stored.n
	sl.s.mu.Lock()
	sl.s.objects = append(sl.s.objects, sl.obj)
	sl.s.mu.Unlock()
	return nil
}

type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }
