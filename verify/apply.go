package verify

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/pg2dynamo/pg2dynamo/ddbjson"
)

// Applier brings the table in line with the source while Compare finds
// the differences (Options.Apply: migrate --changes-only, and --prune's
// deletes). Compare calls it from one goroutine, one call at a time, and
// calls Wait before it reads the table again.
type Applier interface {
	// Put puts w.Item, a new or changed item. It may return before the
	// item is written (Wait waits for it) and may block while earlier
	// writes are pending, which bounds the memory they hold. An error
	// stops the comparison.
	Put(ctx context.Context, w Write) error
	// Delete deletes the stale item of w.ItemRef on the condition that
	// its type attribute still holds w.Type; as Put, it may return before.
	Delete(ctx context.Context, w Write) error
	// Wait returns once every Put and Delete handed so far is done, with
	// the first error of any. Put and Delete may be called again after.
	Wait(ctx context.Context) error
}

// Write is one write Compare hands an Applier. It is the Applier's: Compare
// keeps no reference to it.
type Write struct {
	ItemRef
	// Entity is the name of the entity that derives the item (Put); ""
	// for Delete.
	Entity string
	// Item is the whole item as derived (ddbjson.DecodeItem of its canonical
	// form), for Put; nil for Delete.
	Item map[string]types.AttributeValue
	// Missing, for Put, says that the table's side held no item of the
	// key. With Options.Types an item of another type may hold it: the
	// Applier should put on the condition that it overwrites none.
	Missing bool
	// WriteUnits is what the write consumes as diff prices it
	// (EntityCounts.ChangeWriteUnits and StaleWriteUnits sum them).
	WriteUnits int64
}

// Applied is what Compare handed to Options.Apply, and how the table read
// once it was applied (Options.ReadBack). Its lists keep the first
// Options.MaxListed keys each, in bucket order then sorted; Counts are
// exact. They live in the Result's temporary files (Result.Close).
type Applied struct {
	// Put lists the new and changed items handed to be put.
	Put List[ItemRef] `json:"-"`
	// Delete lists the stale items handed to be deleted, none when
	// Withheld.
	Delete List[ItemRef] `json:"-"`
	// Unapplied lists the keys that did not read back as applied: an item
	// put that is absent or holds other content, a stale item still there
	// with its type.
	Unapplied List[ItemRef] `json:"-"`
	Counts    AppliedCounts `json:"counts"`
	// Withheld says why no stale item was handed to be deleted: the
	// derivation is in doubt (an entity's count disagrees with count(*),
	// or a key is derived twice). Empty when they were, or there were none.
	Withheld string `json:"withheld,omitempty"`
	// ReadBack is true when every key put or deleted was read again
	// (strongly consistent, after Apply.Wait). Matched items put read back
	// as derived, Gone stale items are no longer there, Retyped ones hold
	// another type (another writer's since the Scan); the others are
	// Unapplied.
	ReadBack bool  `json:"read_back"`
	Matched  int64 `json:"matched"`
	Gone     int64 `json:"gone"`
	Retyped  int64 `json:"retyped"`
}

// AppliedCounts gives the exact length of each of Applied's lists.
type AppliedCounts struct {
	Put       ListCount `json:"put"`
	Delete    ListCount `json:"delete"`
	Unapplied ListCount `json:"unapplied"`
}

// truncated reports whether a list of a was cut.
func (a *Applied) truncated() bool {
	c := a.Counts
	return c.Put.Truncated() || c.Delete.Truncated() || c.Unapplied.Truncated()
}

// AppliedOK reports whether the table matched the source once the
// differences were applied: the counts agree, no key is derived twice, no
// stale item was withheld, every key read back as applied, and every
// access pattern, run after the writes, answered as it should. False
// without Apply or without the read-back.
func (r *Result) AppliedOK() bool {
	a := r.Applied
	if a == nil || !a.ReadBack || a.Withheld != "" || a.Counts.Unapplied.Total > 0 || r.Counts.Duplicates.Total > 0 {
		return false
	}
	for _, e := range r.Entities {
		if e.CountProblem != "" {
			return false
		}
	}
	for _, p := range r.Patterns {
		if !p.OK {
			return false
		}
	}
	return true
}

// applyRun is one comparison's Options.Apply: what it hands over, and the
// journal of it on disk, which the stale items wait in until the counts
// are checked and which the read-back reads.
type applyRun struct {
	a          Applier
	deleteOnly bool
	j          *journal
	put, del   *listBuilder[ItemRef]
	unapplied  *listBuilder[ItemRef]
}

func newApplyRun(c *comparison, files *sortGroup, maxListed int) (*applyRun, error) {
	f, err := c.work.tempFile("applied-*")
	if err != nil {
		return nil, err
	}
	return &applyRun{a: c.opts.Apply, deleteOnly: c.opts.DeleteOnly, j: newJournal(f),
		put: newListBuilder[ItemRef](files, "put", maxListed), del: newListBuilder[ItemRef](files, "delete", maxListed),
		unapplied: newListBuilder[ItemRef](files, "unapplied", maxListed)}, nil
}

// putItem hands the derived item s (canonical, of key) to Put as w, and
// journals its key and the hash of its content.
func (ar *applyRun) putItem(ctx context.Context, w Write, key string, s []byte) error {
	if ar.deleteOnly {
		return nil
	}
	item, err := ddbjson.DecodeItem(s)
	if err != nil {
		return err
	}
	if err := ar.j.add(journalEntry{kind: journalPut, key: key, typ: w.Type, units: w.WriteUnits, sum: sha256.Sum256(s)}); err != nil {
		return err
	}
	if err := ar.put.add(key, w.ItemRef); err != nil {
		return err
	}
	w.Item = item
	return ar.a.Put(ctx, w)
}

// staleItem journals a stale item, to be deleted once the counts are
// checked (deleteStale).
func (ar *applyRun) staleItem(key string, ref ItemRef, units int64) error {
	return ar.j.add(journalEntry{kind: journalStale, key: key, typ: ref.Type, units: units})
}

// finish waits for the puts, then hands the stale items to Delete unless
// res's derivation is in doubt (Applied.Withheld), waits for them, and,
// with rb, reads every key put or deleted back. It sets res.Applied.
func (ar *applyRun) finish(ctx context.Context, res *Result, rb *readBack) error {
	out := &Applied{}
	if err := ar.a.Wait(ctx); err != nil {
		return err
	}
	out.Withheld = withheld(res)
	if out.Withheld == "" {
		err := ar.j.each(func(e journalEntry) error {
			if e.kind != journalStale {
				return nil
			}
			ref := itemRef(e.key, e.typ)
			if err := ar.del.add(e.key, ref); err != nil {
				return err
			}
			return ar.a.Delete(ctx, Write{ItemRef: ref, WriteUnits: e.units})
		})
		if err != nil {
			return err
		}
		if err := ar.a.Wait(ctx); err != nil {
			return err
		}
	}
	if rb != nil {
		if err := rb.run(ctx, ar.j, out, out.Withheld == "", ar.unapplied); err != nil {
			return err
		}
		out.ReadBack = true
	}
	out.Put, out.Counts.Put = ar.put.list()
	out.Delete, out.Counts.Delete = ar.del.list()
	out.Unapplied, out.Counts.Unapplied = ar.unapplied.list()
	res.Applied = out
	res.ListsTruncated = res.ListsTruncated || out.truncated()
	return nil
}

// withheld says why res's stale items must not be deleted: an entity's
// count disagrees with count(*), or a key is derived twice; "" when the
// derivation is sound, or there is nothing stale.
func withheld(res *Result) string {
	if res.Stale == 0 {
		return ""
	}
	for _, e := range res.Entities {
		if e.CountProblem != "" {
			return fmt.Sprintf("entity %s's items disagree with the source's count (%s)", e.Entity, e.CountProblem)
		}
	}
	if n := res.Counts.Duplicates.Total; n > 0 {
		return fmt.Sprintf("%d keys are derived more than once", n)
	}
	return ""
}

// journal is an append-only file of the keys an applyRun handed over
// (journalEntry), read back in order. Its file is unlinked when created
// (sortGroup.tempFile). Not safe for concurrent use.
type journal struct {
	f *os.File
	w *bufio.Writer
}

type journalKind byte

const (
	journalPut   journalKind = 'P'
	journalStale journalKind = 'S'
)

// journalEntry is a key put (with the SHA-256 of the derived item's
// canonical form) or stale, its type and the write units of its write.
type journalEntry struct {
	kind  journalKind
	key   string // itemKey
	typ   string
	units int64
	sum   [sha256.Size]byte // journalPut
}

func newJournal(f *os.File) *journal { return &journal{f: f, w: bufio.NewWriterSize(f, 32<<10)} }

// journalHeader is the size of an entry's header: kind, units, the
// lengths of the key and the type, and the hash.
const journalHeader = 1 + 8 + 4 + 4 + sha256.Size

func (j *journal) add(e journalEntry) error {
	var hdr [journalHeader]byte
	hdr[0] = byte(e.kind)
	binary.LittleEndian.PutUint64(hdr[1:], uint64(e.units))
	binary.LittleEndian.PutUint32(hdr[9:], uint32(len(e.key)))
	binary.LittleEndian.PutUint32(hdr[13:], uint32(len(e.typ)))
	copy(hdr[17:], e.sum[:])
	j.w.Write(hdr[:])
	j.w.WriteString(e.key)
	if _, err := j.w.WriteString(e.typ); err != nil {
		return fmt.Errorf("verify: write journal: %w", err)
	}
	return nil
}

// each flushes the journal and calls fn with every entry, in the order
// added. Entries may be added again after it returns.
func (j *journal) each(fn func(journalEntry) error) error {
	if err := j.w.Flush(); err != nil {
		return fmt.Errorf("verify: write journal: %w", err)
	}
	end, err := j.f.Seek(0, io.SeekCurrent)
	if err != nil {
		return fmt.Errorf("verify: journal: %w", err)
	}
	r := bufio.NewReaderSize(io.NewSectionReader(j.f, 0, end), 32<<10)
	for {
		var hdr [journalHeader]byte
		if _, err := io.ReadFull(r, hdr[:]); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return fmt.Errorf("verify: read journal: %w", err)
		}
		kl, tl := binary.LittleEndian.Uint32(hdr[9:]), binary.LittleEndian.Uint32(hdr[13:])
		buf := make([]byte, kl+tl)
		if _, err := io.ReadFull(r, buf); err != nil {
			return fmt.Errorf("verify: read journal: %w", err)
		}
		e := journalEntry{kind: journalKind(hdr[0]), units: int64(binary.LittleEndian.Uint64(hdr[1:])), key: string(buf[:kl]), typ: string(buf[kl:])}
		copy(e.sum[:], hdr[17:])
		if err := fn(e); err != nil {
			return err
		}
	}
}
