package engine

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/pg2dynamo/pg2dynamo/extract"
	"github.com/pg2dynamo/pg2dynamo/follow"
	"github.com/pg2dynamo/pg2dynamo/load"
	"github.com/pg2dynamo/pg2dynamo/mapping"
	"github.com/pg2dynamo/pg2dynamo/pipeline"
	"github.com/pg2dynamo/pg2dynamo/report"
	"github.com/pg2dynamo/pg2dynamo/transform"
	"github.com/pg2dynamo/pg2dynamo/verify"
	"github.com/pg2dynamo/pg2dynamo/verify/outcome"
)

// EvolveOptions apply a new version of the table's own mapping in place:
// migrate with ChangesOnly, or with Follow and Resume; and diff.
type EvolveOptions struct {
	// PreviousMapping is the file the table was written with; its SHA-256 must
	// match the table's tags (or, following, the checkpoint's). "": no new
	// version.
	PreviousMapping string
	// DropGSIs deletes the GSIs only the previous version declares, once the
	// items are in line.
	DropGSIs bool
}

// GSITimeout bounds the wait for one GSI to be created (backfill included) or
// deleted.
const GSITimeout = 2 * time.Hour

// evolution is a new version of the table's mapping, applied in place.
type evolution struct {
	prev    *mapping.Mapping
	prevSHA string
	diff    *mapping.Diff
	// retired are the types only the previous version writes: their items go.
	retired []string
	// sub is the session of the entities to compare, with Follow and Resume;
	// done is set once they are compared and the checkpoint records the new
	// version.
	sub  *session
	done atomic.Bool
	// rejected counts the comparison's rejects; the run ends rejected if any.
	rejected atomic.Int64
	// arn is the table's, once checkTable found it tagged ("" without tags).
	arn string
}

func (ev *evolution) rejectedRows() int64 {
	if ev == nil {
		return 0
	}
	return ev.rejected.Load()
}

// loadEvolution compares PreviousMapping with the run's mapping (nil without
// it), refusing another name or a change the table cannot take in place.
func loadEvolution(j *job, s *session) (*evolution, error) {
	path := j.mig.PreviousMapping
	if path == "" {
		return nil, nil
	}
	prev, err := LoadMapping(j.ctx, path)
	if err != nil {
		return nil, err
	}
	prev.Table.Name = s.m.Table.Name
	if err := mapping.CheckVersions(prev, s.m, path, j.cfg.Mapping); err != nil {
		return nil, refused(fmt.Errorf("%w; nothing was written", err))
	}
	ev := &evolution{prev: prev, prevSHA: mappingSHA256(path), diff: mapping.CompareMappings(prev, s.m)}
	if err := ev.diff.Err(s.m.Name); err != nil {
		return nil, refused(err)
	}
	ev.retired = ev.diff.RetiredTypes(prev, s.m)
	return ev, nil
}

func (ev *evolution) describe(j *job, s *session) {
	if ev.diff.Empty() {
		fmt.Fprintf(j.log, "mapping %s: %s changes nothing of %s\n", s.m.Name, j.cfg.Mapping, j.mig.PreviousMapping)
		return
	}
	fmt.Fprintf(j.log, "mapping %s: from %s to %s:\n", s.m.Name, j.mig.PreviousMapping, j.cfg.Mapping)
	for _, c := range ev.diff.Changes() {
		fmt.Fprintf(j.log, "  %s: %s\n", c[0], c[1])
	}
}

// checkTable refuses, before anything is written, a table not the previous
// version's: another mapping's, or tagged with a SHA-256 of neither version.
// With lease, a follow streaming into it refuses the run, but its own resume.
// Without tags nothing is checked.
func (ev *evolution) checkTable(j *job, s *session, lease bool) error {
	name := s.m.Table.Name
	td, err := load.DescribeTable(j.ctx, s.client, name)
	if err != nil {
		return err
	}
	if td == nil {
		return refused(fmt.Errorf("%s: table %s does not exist: a new version of a mapping is applied to the table the previous one wrote; nothing was written", j.opt(OptPreviousMapping), name))
	}
	tags, err := load.TableTags(j.ctx, s.client, aws.ToString(td.TableArn))
	if errors.Is(err, load.ErrNoTags) {
		fmt.Fprintf(j.log, "cannot read the tags of table %s (%v): which version of mapping %s wrote it is not checked\n", name, err, s.m.Name)
		return nil
	}
	if err != nil {
		return err
	}
	if lease {
		if err := checkLease(j, s, tags); err != nil {
			return err
		}
	}
	tagged, ok := load.OwnerOf(tags)
	mine := owner(s.m, s.mappingSHA256)
	prevHash := owner(ev.prev, ev.prevSHA).Hash
	if e, under := load.EvolvingOf(tags); under && !e.Between(prevHash, mine.Hash) {
		return refused(evolvingError(j, name, s.m.Name, e))
	}
	ev.arn = aws.ToString(td.TableArn)
	switch {
	case !ok || tagged.Name != s.m.Name:
		return refused(fmt.Errorf("%s: table %s is not tagged as mapping %s's (tags: %v): nothing was written", j.opt(OptPreviousMapping), name, s.m.Name, tagged))
	case tagged.Hash == mine.Hash:
		fmt.Fprintf(j.log, "table %s is tagged with this version of mapping %s already (SHA-256 %s…): comparing its changed entities again\n", name, s.m.Name, mine.Hash)
	case tagged.Hash != prevHash:
		return refused(fmt.Errorf("%s: table %s was written by the version of mapping %s whose SHA-256 begins %s, and %s's begins %s: give the file of the version that wrote it; nothing was written",
			j.opt(OptPreviousMapping), name, s.m.Name, tagged.Hash, j.mig.PreviousMapping, prevHash))
	}
	return nil
}

// mark tags the table as partway through this change before any item is
// written, so until finish only a run applying one of the two versions writes
// into it (checkOwner).
func (ev *evolution) mark(j *job, s *session) error {
	if ev.arn == "" {
		return nil
	}
	if err := load.MarkEvolving(j.ctx, s.client, ev.arn, ev.change(s)); err != nil && !errors.Is(err, load.ErrNoTags) {
		return err
	}
	return nil
}

func (ev *evolution) change(s *session) load.Evolving {
	return load.Evolving{From: owner(ev.prev, ev.prevSHA).Hash, To: owner(s.m, s.mappingSHA256).Hash}
}

// evolvingError refuses a run into a table partway through e that neither
// finishes e nor takes it back.
func evolvingError(j *job, table, name string, e load.Evolving) error {
	return fmt.Errorf("table %s is partway through a new version of mapping %s (tag %s): from the version whose SHA-256 begins %s to the one whose SHA-256 begins %s, which a run stopped applying; it holds items of both. Nothing was written: finish it with the run that started it (%s the new version's file, %s the previous one's), or take it back with the two files swapped",
		table, name, load.TagEvolving, e.From, e.To, j.opt(OptMapping), j.opt(OptPreviousMapping))
}

// createGSIs adds the new GSIs one at a time, as DynamoDB requires, each ACTIVE
// and backfilled before any item is compared, so the items put are indexed. One
// a run before created is waited for the same way.
func (ev *evolution) createGSIs(j *job, s *session) error {
	for _, g := range ev.diff.GSIsAdded {
		fmt.Fprintf(j.log, "GSI %s: creating it (UpdateTable), or, if the table has it already, waiting until it is ACTIVE and backfilled\n", g)
		created, err := load.EnsureGSI(j.ctx, s.client, s.m, g, GSITimeout)
		if err != nil {
			return err
		}
		if created {
			fmt.Fprintf(j.log, "GSI %s: created, ACTIVE\n", g)
		} else {
			fmt.Fprintf(j.log, "GSI %s: the table had it already; ACTIVE\n", g)
		}
	}
	return nil
}

// finish deletes the removed GSIs (DropGSIs) and tags the new version.
func (ev *evolution) finish(j *job, s *session) error {
	td, err := load.DescribeTable(j.ctx, s.client, s.m.Table.Name)
	if err != nil || td == nil {
		return err
	}
	for _, g := range ev.diff.GSIsRemoved {
		switch {
		case load.FindGSI(td, g) == nil:
		case !j.mig.DropGSIs:
			fmt.Fprintf(j.log, "GSI %s: no longer in mapping %s, and kept (%s deletes it)\n", g, s.m.Name, j.opt(OptDropGSIs))
		default:
			fmt.Fprintf(j.log, "GSI %s: deleting it (%s)\n", g, j.opt(OptDropGSIs))
			if err := load.DeleteGSI(j.ctx, s.client, s.m.Table.Name, g, GSITimeout); err != nil {
				return err
			}
		}
	}
	mine := owner(s.m, s.mappingSHA256)
	err = load.TagEvolved(j.ctx, s.client, aws.ToString(td.TableArn), mine)
	if errors.Is(err, load.ErrNoTags) {
		fmt.Fprintf(j.log, "table %s is not tagged with the new version of mapping %s: %v\n", s.m.Table.Name, s.m.Name, err)
		return nil
	}
	if err == nil {
		fmt.Fprintf(j.log, "table %s: tagged with mapping %s\n", s.m.Table.Name, mine)
	}
	return err
}

// subset is s restricted to the entities to compare, with no access pattern
// (the others' items answer them too) and plans compiled again (items name
// their entity by its place in the mapping).
func (ev *evolution) subset(j *job, s *session) (*session, error) {
	affected := ev.diff.Compared(s.m)
	sub := *s
	sub.m, _ = s.m.Only(func(_ int, e *mapping.Entity) bool { return slices.Contains(affected, e.Name) })
	var err error
	sub.plans, err = pipeline.Prepare(j.ctx, s.src, sub.m)
	return &sub, err
}

// compared names the compared (mapping.Diff.Compared) and retired entities.
func (ev *evolution) compared(m *mapping.Mapping) string {
	return strings.Join(append(ev.diff.Compared(m), ev.retired...), ", ")
}

// options narrows a comparison to the compared and retired types, deleting the
// retired ones' items.
func (ev *evolution) options(sub *session, opts *verify.Options) {
	opts.Types = ev.diff.ComparedTypes()
	opts.Retired = ev.retired
	opts.SkipPatterns = true
}

// evolveChanges is migrate with ChangesOnly and PreviousMapping, into a table
// no follow holds: checked, new GSIs created, then the entities whose items
// change (and retired types' items) compared and written as ChangesOnly does;
// then finish.
func evolveChanges(j *job, op *opened) error {
	s := op.s
	ev, err := loadEvolution(j, s)
	if err != nil {
		return err
	}
	ev.describe(j, s)
	if err := s.dynamo(j, nil); err != nil {
		return err
	}
	if err := ev.checkTable(j, s, true); err != nil {
		return err
	}
	if err := ev.createGSIs(j, s); err != nil {
		return err
	}
	if err := ev.mark(j, s); err != nil {
		return err
	}
	out, err := openSink(j, s)
	if err != nil {
		return err
	}
	sub, err := ev.subset(j, s)
	if err != nil {
		return err
	}
	done := func() error { return ev.finish(j, s) }
	if len(sub.m.Entities) == 0 && len(ev.retired) == 0 {
		fmt.Fprintf(j.log, "no entity's items change: nothing to compare\n")
		return done()
	}
	fmt.Fprintf(j.log, "comparing %s with table %s (only their items are written; the Scan reads the whole table, and returns theirs)\n",
		ev.compared(s.m), s.m.Table.Name)
	return writeChanges(j, sub, op, out, func(o *verify.Options) { ev.options(sub, o) }, done)
}

// previousFingerprint is the checkpoint fingerprint of the mapping file path
// for table ("" when unreadable).
func previousFingerprint(path, table string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	return pipeline.Fingerprint(b, table)
}

// start readies migrate with Follow, Resume and PreviousMapping before anything
// is written: the previous full load done, the table checked (the follow's own
// slot takes its lease over), the new GSIs created and the subset compiled.
func (ev *evolution) start(j *job, s *session, cp *checkpointFile) error {
	for _, e := range ev.prev.Entities {
		if p := cp.Entities[e.Name]; p != nil && !p.Done && cp.Mapping != ev.fp(j) {
			return refused(fmt.Errorf("%s: checkpoint %s records the full load of %s unfinished: finish it with the previous version first (%s %s), then apply this one; nothing was written",
				j.opt(OptPreviousMapping), cp.path, e.Name, j.cfg.run("migrate", OptFollow, OptResume, OptMapping), j.mig.PreviousMapping))
		}
	}
	ev.describe(j, s)
	if err := s.dynamo(j, nil); err != nil {
		return err
	}
	if err := ev.checkTable(j, s, true); err != nil {
		return err
	}
	if err := ev.createGSIs(j, s); err != nil {
		return err
	}
	if err := ev.mark(j, s); err != nil {
		return err
	}
	var err error
	ev.sub, err = ev.subset(j, s)
	return err
}

// fp is the checkpoint fingerprint of the new version.
func (ev *evolution) fp(j *job) string {
	return previousFingerprint(j.cfg.Mapping, ev.prev.Table.Name)
}

// follow has the follow stream with the new version from the slot at once (the
// checkpoint's shapes are the new version's, so changed entities are not
// derived again whole) while compareBeside runs. Until the comparison is done,
// a stopped run resumes with the same command and compares again.
func (ev *evolution) follow(j *job, s *session, cp *checkpointFile, fl *following, rejects *rejectFile, rf *reportFiles) {
	cp.Shapes = map[string]transform.Shape{}
	for _, p := range s.plans {
		cp.Shapes[p.Entity().Name] = p.Shape()
	}
	fl.alongside = func(ctx context.Context, a *follow.Applier) error {
		return ev.compareBeside(ctx, j, s, cp, fl, a, rejects, rf)
	}
}

// compareBeside compares the changed entities in a snapshot of its own, taken
// once every write of the follow is recorded (follow.Applier.Beside), and hands
// the differences to the follow, which leaves out the keys it has written
// since: no change of the stream is lost or overwritten by an older state. Then
// the checkpoint records the new version, and finish.
func (ev *evolution) compareBeside(ctx context.Context, j *job, s *session, cp *checkpointFile, fl *following, a *follow.Applier, rejects *rejectFile, rf *reportFiles) error {
	if len(ev.sub.m.Entities) > 0 || len(ev.retired) > 0 {
		windows := fl.bulkPace()
		defer windows()
		src, err := extract.Connect(ctx, j.cfg.Source)
		if err != nil {
			return err
		}
		defer src.Close(context.WithoutCancel(ctx))
		b, err := a.Beside(ctx)
		if err != nil {
			return err
		}
		defer b.Close()
		sub := *ev.sub
		sub.src = src
		if sub.plans, err = pipeline.Prepare(ctx, src, sub.m); err != nil {
			return err
		}
		if err := src.Begin(ctx); err != nil {
			return err
		}
		defer src.End(context.WithoutCancel(ctx))
		before := fl.applied()
		fmt.Fprintf(j.log, "comparing %s with table %s beside the follow, in a snapshot of its own: the follow streams with %s meanwhile, and writes the differences beside its windows (theirs first), but for the keys it has written since the snapshot (theirs are newer); the follow has applied %d changes so far\n",
			ev.compared(s.m), s.m.Table.Name, j.cfg.Mapping, before)
		r, res, err := compareBesideWith(ctx, j, &sub, b, rejects, func(o *verify.Options) { ev.options(&sub, o) })
		if err != nil {
			return err
		}
		defer res.Close()
		if err := writeReport(j, r, j.out, rf); err != nil {
			return err
		}
		ev.rejected.Store(r.Totals.Rejected + r.Applied.Rejected)
		if res.Applied.Withheld != "" {
			return mismatch(fmt.Errorf("%s; the checkpoint still records %s: run the same command again", r.Headline(), j.mig.PreviousMapping))
		}
		windows()
		fmt.Fprintf(j.log, "comparison done: the follow applied %d changes of the stream while it ran; of the comparison's %d writes, %d puts and %d deletes left out (the follow had written their keys since the snapshot)\n",
			fl.applied()-before, b.Handed, b.SkippedPuts, b.SkippedDeletes)
	}
	err := cp.update(func() {
		cp.Mapping = ev.fp(j)
		cp.Evolved = ev.change(s).String()
		for _, p := range s.plans {
			cp.Entities[p.Entity().Name] = &pipeline.EntityProgress{Done: true}
		}
		for _, e := range ev.prev.Entities {
			if s.m.Entity(e.Name) == nil {
				delete(cp.Entities, e.Name)
			}
		}
	})
	if err != nil {
		return err
	}
	ev.done.Store(true)
	fmt.Fprintf(j.log, "checkpoint %s: recorded mapping %s\n", cp.path, j.cfg.Mapping)
	if err := fl.dropOldTables(ctx, j, ev.prev); err != nil {
		return err
	}
	return ev.finish(j, s)
}

// compareBesideWith compares s with the table, handing its writes to b, and
// returns the report; the caller closes the Result. The writes are not read
// back: the follow writes the table meanwhile.
func compareBesideWith(ctx context.Context, j *job, s *session, b *follow.Beside, rejects *rejectFile, narrow func(*verify.Options)) (*report.Report, *outcome.Result, error) {
	prog, closeProg := j.progress()
	ap := &besideApplier{b: b, byType: map[string]int64{}, client: j.readLimit().GetItem(s.client), table: s.m.Table.Name, typeAttr: s.m.TypeAttribute,
		keyAttrs: s.m.Table.Keys(), keyTypes: s.m.Table.KeyTypes(), reject: rejects.Write}
	opts := verify.Options{Segments: j.rep.Segments, Reads: j.readLimit(), Sample: j.rep.Sample, Progress: prog, Readers: j.ld.Readers, MinRangeRows: j.ld.MinRangeRows,
		SkipPatterns: true, Apply: ap, OnReject: rejects.Write}
	narrow(&opts)
	ap.guard = opts.Types
	run := s.runInfo(j, time.Now())
	res, err := verify.Compare(ctx, s.src, s.m, s.plans, s.client, opts)
	closeProg()
	if err != nil {
		return nil, nil, err
	}
	r := report.New(report.ModeChanges, res, 0)
	r.Run = run
	r.Applied = &report.Applied{Command: report.CommandChangesOnly, Applied: res.Applied, Written: ap.puts - b.SkippedPuts, Deleted: ap.deletes - b.SkippedDeletes,
		DeletedByType: ap.byType, Rejected: ap.rejected, WriteUnits: ap.units, FullWriteUnits: res.WriteUnits(),
		Unchecked: "the follow writes the table meanwhile: pg2dynamo verify checks it whole"}
	return r, res, nil
}

// besideApplier hands a comparison's writes to the follow (follow.Beside), the
// table's one writer, which leaves out keys it wrote since the snapshot, so
// deletes need no type condition. With guard, a missing item's key is looked
// up first (consistent GetItem): another type's item there makes a reject.
type besideApplier struct {
	b                    *follow.Beside
	puts, deletes, units int64
	// rejected counts the collision rejects, as tableApplier does.
	rejected        int64
	byType          map[string]int64
	client          load.GetItemAPI
	table, typeAttr string
	keyAttrs        [2]string
	keyTypes        [2]string
	guard           []string
	reject          func(pipeline.Reject) error
}

func (x *besideApplier) Put(ctx context.Context, w verify.Write) error {
	if w.Missing && len(x.guard) > 0 {
		holder, err := x.holder(ctx, w)
		if err != nil {
			return err
		}
		if holder != "" {
			x.rejected++
			return x.reject(collisionReject(w, x.keyAttrs, x.keyTypes, holder))
		}
	}
	x.puts++
	x.units += w.WriteUnits
	return x.b.Put(ctx, w.Entity, w.Item)
}

// holder is the type of the item at w's key when of none of the guard's types,
// or "".
func (x *besideApplier) holder(ctx context.Context, w verify.Write) (string, error) {
	key := transform.KeyMap(x.keyAttrs, x.keyTypes, [2]string{w.PK, w.SK})
	out, err := x.client.GetItem(ctx, &dynamodb.GetItemInput{TableName: &x.table, Key: key, ConsistentRead: aws.Bool(true),
		ProjectionExpression: aws.String("#t"), ExpressionAttributeNames: map[string]string{"#t": x.typeAttr}})
	if err != nil || out.Item == nil {
		return "", err
	}
	typ := load.StringAttr(out.Item, x.typeAttr)
	if slices.Contains(x.guard, typ) {
		return "", nil
	}
	return cmp.Or(typ, "(none)"), nil
}

func (x *besideApplier) Delete(ctx context.Context, w verify.Write) error {
	x.deletes++
	x.units += w.WriteUnits
	x.byType[w.Type]++
	return x.b.Delete(ctx, [2]string{w.PK, w.SK})
}

func (x *besideApplier) Wait(ctx context.Context) error { return x.b.Flush(ctx) }

// stopped is the error of a run whose follow stopped before the comparison
// beside it was done.
func (ev *evolution) stopped(j *job) error {
	if ev == nil || ev.done.Load() {
		return nil
	}
	return failed(fmt.Errorf("the follow stopped before the comparison of the entities that change was done: the checkpoint still records %s; run the same command again (it compares them again)", j.mig.PreviousMapping))
}

// evolveDiff is diff with PreviousMapping: what applying the new version would
// change and cost, writing nothing. It checks the table as evolveChanges does
// (the new GSIs aside), compares the changed entities in one snapshot pricing
// writes in write units, and reads new keys again for those another type holds
// (verify.Options.Holders).
func evolveDiff(j *job, s *session, rf *reportFiles) error {
	ev, err := loadEvolution(j, s)
	if err != nil {
		return err
	}
	ev.describe(j, s)
	if err := ev.checkTable(j, s, false); err != nil {
		return err
	}
	fits := *s.m
	fits.Table.GSIs = slices.DeleteFunc(slices.Clone(fits.Table.GSIs), func(g mapping.GSI) bool { return slices.Contains(ev.diff.GSIsAdded, g.Name) })
	if err := (&session{m: &fits, client: s.client}).checkTable(j); err != nil {
		return err
	}
	sub, err := ev.subset(j, s)
	if err != nil {
		return err
	}
	if err := s.src.Begin(j.ctx); err != nil {
		return err
	}
	if len(sub.m.Entities) == 0 && len(ev.retired) == 0 {
		fmt.Fprintf(j.out, "diff: no entity's items change; applying it creates %d GSIs and writes no item\n", len(ev.diff.GSIsAdded))
		return nil
	}
	fmt.Fprintf(j.log, "diff: comparing %s with table %s\n", ev.compared(s.m), s.m.Table.Name)
	prog, closeProg := j.progress()
	run := sub.runInfo(j, time.Now())
	opts := verify.Options{Segments: j.rep.Segments, Reads: j.readLimit(), ChangeCost: true, Progress: prog, Holders: s.client}
	ev.options(sub, &opts)
	res, err := verify.Compare(j.ctx, sub.src, sub.m, sub.plans, s.client, opts)
	closeProg()
	if err != nil {
		return err
	}
	defer res.Close()
	r := report.New(report.ModeDiff, res, j.rep.PricePerMillion)
	r.Run = run
	return writeReport(j, r, j.out, rf)
}
