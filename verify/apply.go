package verify

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/pg2dynamo/pg2dynamo/ddbjson"
	"github.com/pg2dynamo/pg2dynamo/internal/extsort"
	"github.com/pg2dynamo/pg2dynamo/verify/outcome"
)

// Applier brings the table in line with the source as Compare finds differences
// (migrate --changes-only and --prune). Compare calls it one call at a time
// from one goroutine, and calls Wait before reading the table again.
type Applier interface {
	// Put puts w.Item, new or changed. It may return before the write (Wait
	// waits) and may block while earlier writes are pending, bounding their
	// memory. An error stops the comparison.
	Put(ctx context.Context, w Write) error
	// Delete deletes w.ItemRef's stale item on condition its type attribute
	// still holds w.Type; it may return early as Put.
	Delete(ctx context.Context, w Write) error
	// Wait returns once every Put and Delete so far is done, with the first
	// error. Calls may resume after.
	Wait(ctx context.Context) error
}

// Refusals is implemented by an Applier whose puts the table may refuse, each
// a reject of its caller's:
// their keys are neither read back as unapplied nor expected in an access
// pattern's answer.
type Refusals interface {
	// Refused reports whether the put of the item of key texts pk and sk
	// (transform.ItemKey) was refused. Safe for concurrent use.
	Refused(pk, sk string) bool
}

// Write is one write Compare hands an Applier, which owns it.
type Write struct {
	outcome.ItemRef
	// Entity names the deriving entity (Put); "" for Delete.
	Entity string
	// Item is the derived item (ddbjson.DecodeItem of its canonical form) for
	// Put; nil for Delete.
	Item map[string]types.AttributeValue
	// Missing, for Put: the table's side held no item of the key. With
	// Options.Types another type may hold it, so the Applier should put only if
	// overwriting none.
	Missing bool
	// WriteUnits is the write's cost as diff prices it.
	WriteUnits int64
}

// applyRun is one comparison's Options.Apply and its on-disk journal, where
// stale items wait until the counts are checked and which the read-back reads.
type applyRun struct {
	a          Applier
	deleteOnly bool
	j          *journal
	put, del   *outcome.ListBuilder[outcome.ItemRef]
	unapplied  *outcome.ListBuilder[outcome.ItemRef]
}

func newApplyRun(c *comparison, files *extsort.Group, maxListed int) (*applyRun, error) {
	j, err := newJournal(c.work, "applied-*")
	if err != nil {
		return nil, err
	}
	return &applyRun{a: c.opts.Apply, deleteOnly: c.opts.DeleteOnly, j: j,
		put: outcome.NewListBuilder[outcome.ItemRef](files, "put", maxListed), del: outcome.NewListBuilder[outcome.ItemRef](files, "delete", maxListed),
		unapplied: outcome.NewListBuilder[outcome.ItemRef](files, "unapplied", maxListed)}, nil
}

// putItem hands s to Put and journals its key and content hash.
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
	if err := ar.put.Add(key, w.ItemRef); err != nil {
		return err
	}
	w.Item = item
	return ar.a.Put(ctx, w)
}

// staleItem journals a stale item for finish to delete, after the counts are
// checked.
func (ar *applyRun) staleItem(key string, ref outcome.ItemRef, units int64) error {
	return ar.j.add(journalEntry{kind: journalStale, key: key, typ: ref.Type, units: units})
}

// finish waits for the puts, hands the stale items to Delete unless the
// derivation is in doubt, waits, and with rb reads every key back. It sets
// res.Applied.
func (ar *applyRun) finish(ctx context.Context, res *outcome.Result, rb *readBack) error {
	out := &outcome.Applied{}
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
			if err := ar.del.Add(e.key, ref); err != nil {
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
		refused, _ := ar.a.(Refusals)
		if err := rb.run(ctx, ar.j, out, out.Withheld == "", ar.unapplied, refused); err != nil {
			return err
		}
		out.ReadBack = true
	}
	out.Put, out.Counts.Put = ar.put.List()
	out.Delete, out.Counts.Delete = ar.del.List()
	out.Unapplied, out.Counts.Unapplied = ar.unapplied.List()
	res.Applied = out
	res.ListsTruncated = res.ListsTruncated || out.Truncated()
	return nil
}

// withheld says why res's stale items must not be deleted, or "" when the
// derivation is sound or nothing is stale.
func withheld(res *outcome.Result) string {
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

// journal is an append-only record file of the keys an applyRun handed over,
// read back in order. Not safe for concurrent use.
type journal struct {
	*extsort.Records
	buf []byte // the entry being written, reused
}

type journalKind byte

const (
	journalPut   journalKind = 'P'
	journalStale journalKind = 'S'
)

// journalEntry is a key put (with the SHA-256 of its canonical item) or stale,
// its type and write units.
type journalEntry struct {
	kind  journalKind
	key   string // itemKey
	typ   string
	units int64
	sum   [sha256.Size]byte // journalPut
}

func newJournal(g *extsort.Group, name string) (*journal, error) {
	r, err := g.NewRecords(name, 32<<10)
	if err != nil {
		return nil, err
	}
	return &journal{Records: r}, nil
}

// journalHeader is an entry header's size: kind, units, key length, hash.
const journalHeader = 1 + 8 + 4 + sha256.Size

func (j *journal) add(e journalEntry) error {
	b := append(j.buf[:0], byte(e.kind))
	b = binary.LittleEndian.AppendUint64(b, uint64(e.units))
	b = binary.LittleEndian.AppendUint32(b, uint32(len(e.key)))
	b = append(append(append(b, e.sum[:]...), e.key...), e.typ...)
	j.buf = b
	if err := j.Append(b); err != nil {
		return fmt.Errorf("verify: write journal: %w", err)
	}
	return nil
}

// each calls fn with every entry in order; adding may resume after.
func (j *journal) each(fn func(journalEntry) error) error {
	return j.Each(func(b []byte) error {
		if len(b) < journalHeader || uint64(len(b)-journalHeader) < uint64(binary.LittleEndian.Uint32(b[9:])) {
			return errors.New("verify: read journal: an entry cut short")
		}
		kl := binary.LittleEndian.Uint32(b[9:])
		e := journalEntry{kind: journalKind(b[0]), units: int64(binary.LittleEndian.Uint64(b[1:])),
			key: string(b[journalHeader : journalHeader+kl]), typ: string(b[journalHeader+kl:])}
		copy(e.sum[:], b[13:])
		return fn(e)
	})
}
