package engine

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/pg2dynamo/pg2dynamo/load"
	"github.com/pg2dynamo/pg2dynamo/mapping"
	"github.com/pg2dynamo/pg2dynamo/pipeline"
	"github.com/pg2dynamo/pg2dynamo/report"
	"github.com/pg2dynamo/pg2dynamo/transform"
	"github.com/pg2dynamo/pg2dynamo/verify"
)

// EvolveOptions apply a new version of the table's own mapping (the same
// name) to the table in place: migrate with ChangesOnly, or with Follow
// and Resume, given PreviousMapping; and diff with it.
type EvolveOptions struct {
	// PreviousMapping is the mapping file the table was written with
	// (the version before Config.Mapping): its SHA-256 must be the one
	// the table's tags record (load.TagMappingHash), or, with Follow and
	// Resume, the checkpoint's. "": no new version is applied.
	PreviousMapping string
	// DropGSIs deletes the GSIs the previous version declares and the new
	// one does not, once the items are in line; without it they stay.
	DropGSIs bool
}

// GSITimeout bounds the wait for one GSI to be created (its backfill
// included) or deleted.
const GSITimeout = 2 * time.Hour

// evolution is a new version of the table's mapping, applied in place:
// what changes from the previous one, and the entities to compare.
type evolution struct {
	prev    *mapping.Mapping
	prevSHA string
	diff    *mapping.Diff
	// retired are the types only the previous version writes: their
	// items are deleted.
	retired []string
	// sub is the session of the entities to compare (subset), with
	// Follow and Resume.
	sub *session
}

// loadEvolution reads EvolveOptions.PreviousMapping and compares it with
// the run's mapping: nil without it. Another name, or a change the table
// cannot take in place (mapping.Diff.Refusals), is refused.
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

// describe writes what changes (mapping.Diff.Changes), one line a
// change, to j.log.
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

// checkTable refuses, before anything is written, a table that is not
// the previous version's: another mapping's, or tagged with a SHA-256
// that is neither version's (a version between them, never applied).
// With lease, the table's lease is checked first (checkLease): a follow
// streaming into it refuses the run, but its own resume. An endpoint
// without tags is noted, and nothing is checked.
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

// createGSIs adds the new version's GSIs the table lacks, one at a time
// as DynamoDB requires, each waited for until ACTIVE and backfilled,
// before any item is compared: the items put next are indexed as they are
// written. A GSI the table has already (a run before created it, and may
// have ended while DynamoDB was still building it) is waited for the
// same way (load.EnsureGSI).
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

// finish, once the items are in line, deletes the removed GSIs
// (DropGSIs) and tags the table with the new version.
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
	err = load.TagTable(j.ctx, s.client, aws.ToString(td.TableArn), mine)
	if errors.Is(err, load.ErrNoTags) {
		fmt.Fprintf(j.log, "table %s is not tagged with the new version of mapping %s: %v\n", s.m.Table.Name, s.m.Name, err)
		return nil
	}
	if err == nil {
		fmt.Fprintf(j.log, "table %s: tagged with mapping %s\n", s.m.Table.Name, mine)
	}
	return err
}

// subset is s restricted to the entities whose items change: the
// mapping with those entities only (and no access pattern: the others'
// items answer them too), and their plans, compiled again for it (a
// plan's items name their entity by its place in the mapping).
func (ev *evolution) subset(j *job, s *session) (*session, error) {
	affected := ev.affected(s.m)
	sub := *s
	m := *s.m
	m.Entities, m.AccessPatterns = nil, nil
	for _, e := range s.m.Entities {
		if slices.Contains(affected, e.Name) {
			m.Entities = append(m.Entities, e)
		}
	}
	sub.m = &m
	var err error
	sub.plans, err = pipeline.Prepare(j.ctx, s.src, &m)
	return &sub, err
}

// affected names the entities of m (the new version) to compare
// (mapping.Diff.Compared): those whose items change, and every other
// entity of their types, old or new.
func (ev *evolution) affected(m *mapping.Mapping) []string {
	return ev.diff.Compared(m)
}

// options narrows a comparison of the subset (subset) to the items of
// its types and of the retired ones (mapping.Diff.ComparedTypes), and
// deletes the retired ones' items.
func (ev *evolution) options(sub *session, opts *verify.Options) {
	opts.Types = ev.diff.ComparedTypes()
	opts.Retired = ev.retired
	opts.SkipPatterns = true
}

// evolveChanges is migrate with ChangesOnly and PreviousMapping: the new
// version of the table's mapping applied to a table no follow holds. It
// names what changes, refuses what cannot change in place, checks that
// the table is the previous version's, creates the new GSIs, then
// compares only the entities whose items change (and the items of the
// types no entity writes any more) with the table, writing the new and
// changed items and deleting the stale ones (re-keyed items among them)
// as ChangesOnly does; then it deletes the removed GSIs
// (DropGSIs) and tags the table with the new version.
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
		strings.Join(append(ev.affected(s.m), ev.retired...), ", "), s.m.Table.Name)
	return writeChanges(j, sub, op, out, func(o *verify.Options) { ev.options(sub, o) }, done)
}

// previousFingerprint is the checkpoint fingerprint of the mapping file
// path for table ("" when it cannot be read: no checkpoint has it).
func previousFingerprint(path, table string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	return pipeline.Fingerprint(b, table)
}

// start readies migrate with Follow, Resume and PreviousMapping before
// anything is written, once loadEvolution has compared the two versions:
// the checkpoint's full load done, the table checked (its lease: the
// follow's own slot takes it over) and the new GSIs created, and the
// plans of the entities to compare compiled.
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
	var err error
	ev.sub, err = ev.subset(j, s)
	return err
}

// fp is the checkpoint fingerprint of the run's mapping (the new
// version).
func (ev *evolution) fp(j *job) string {
	return previousFingerprint(j.cfg.Mapping, ev.prev.Table.Name)
}

// applyFollowed is migrate with Follow, Resume and PreviousMapping's step
// in place of the full load: in the snapshot just begun (after the slot's
// confirmed position, as no follow streams), the entities whose items
// change are compared with the table and the differences written, as
// ChangesOnly writes them; then the checkpoint records the new
// version (its fingerprint and plan shapes), the removed GSIs are
// deleted (DropGSIs) and the table tagged. The follow then streams
// from the slot's confirmed position with the new version: the changes
// committed since are applied again, each from the source's state then
// (follow.Applier), so none the comparison's snapshot predates is lost,
// and none is overwritten by it: the stream waits for the comparison.
func (ev *evolution) applyFollowed(j *job, s *session, cp *checkpointFile, out sinkOut, rejects *rejectFile, rf *reportFiles) error {
	if len(ev.sub.m.Entities) > 0 || len(ev.retired) > 0 {
		fmt.Fprintf(j.log, "comparing %s with table %s before following on (the follow waits for it; the slot keeps the changes meanwhile)\n",
			strings.Join(append(ev.affected(s.m), ev.retired...), ", "), s.m.Table.Name)
		r, res, err := applyChanges(j, ev.sub, out, rejects, func(o *verify.Options) { ev.options(ev.sub, o) })
		if err != nil {
			return err
		}
		defer res.Close()
		if err := writeReport(j, r, j.out, rf); err != nil {
			return err
		}
		if (r.Applied.ReadBack && !r.OK) || res.Applied.Withheld != "" {
			return mismatch(fmt.Errorf("%s; the follow did not start: run the same command again", r.Headline()))
		}
	}
	cp.Mapping, cp.Shapes = ev.fp(j), map[string]transform.Shape{}
	for _, p := range s.plans {
		cp.Shapes[p.Entity().Name] = p.Shape()
		cp.Entities[p.Entity().Name] = &pipeline.EntityProgress{Done: true}
	}
	for _, e := range ev.prev.Entities {
		if s.m.Entity(e.Name) == nil {
			delete(cp.Entities, e.Name)
		}
	}
	if err := cp.save(); err != nil {
		return err
	}
	fmt.Fprintf(j.log, "checkpoint %s: recorded mapping %s\n", cp.path, j.cfg.Mapping)
	return ev.finish(j, s)
}

// evolveDiff is diff with PreviousMapping: what applying the run's mapping,
// a new version of the table's, would change and cost, writing nothing.
// It says what changes (describe), checks the table is the previous
// version's and fits the new one but for the GSIs to create, then
// compares, in one snapshot, only the entities whose items change (and
// the items of retired types) with the table, pricing the puts and
// deletes in write units (report.ModeDiff).
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
	fmt.Fprintf(j.log, "diff: comparing %s with table %s\n", strings.Join(append(ev.affected(s.m), ev.retired...), ", "), s.m.Table.Name)
	prog, closeProg := j.progress()
	run := sub.runInfo(j, time.Now())
	opts := verify.Options{Segments: j.rep.Segments, ChangeCost: true, Progress: prog}
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
