package engine

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"io/fs"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/pg2dynamo/pg2dynamo/follow"
	"github.com/pg2dynamo/pg2dynamo/load"
	"github.com/pg2dynamo/pg2dynamo/mapping"
	"github.com/pg2dynamo/pg2dynamo/pipeline"
	"github.com/pg2dynamo/pg2dynamo/report"
	"github.com/pg2dynamo/pg2dynamo/transform"
)

// Migrate runs a migration: the full load of every entity from one snapshot
// into the table, then Prune, the follow, or the check in the load's snapshot;
// DryRun only compares, ChangesOnly writes what differs. The table must be the
// mapping's and no other follow's (checkOwner). Errors have a Kind: KindRefused
// when nothing was written (*OptionError, *UnnamedError, *LeaseHeldError among
// them), KindRejected when rows were rejected, KindMismatch when the check
// failed.
func Migrate(ctx context.Context, cfg Config, o MigrateOptions) (err error) {
	if err := o.check(cfg); err != nil {
		return err
	}
	j := newJob(ctx, cfg, "migrate")
	j.mig = o
	if o.DryRun {
		j.command = "migrate " + j.opt(OptDryRun)
		return dryRun(j)
	}
	if o.ChangesOnly {
		return changesOnly(j)
	}
	op, err := j.begin(opening{lock: true, rejects: true, appendRejects: o.Resume, reports: true})
	if err != nil {
		return err
	}
	defer op.close()
	defer releaseLease(j) // a follow's, taken by openSink
	s, rejects, rf := op.s, op.rejects, op.rf
	// The checkpoint before the table: a refused Resume creates nothing.
	cp, err := startCheckpoint(j, cfg.Mapping, s.m, s.src.Name(), s.plans)
	if err != nil {
		return err
	}
	if o.Resume {
		j.evolved = cp.Evolved
	}
	var fl *following
	var ev *evolution
	if o.Follow && o.PreviousMapping != "" {
		if ev, err = loadEvolution(j, s); err != nil {
			return err
		}
	}
	if o.Follow {
		if err := checkLeaseFirst(j, s); err != nil {
			return err
		}
		if fl, err = startFollowing(j, s, cp); err != nil {
			return err
		}
		defer func() {
			if err != nil {
				fl.abandon(j, s)
			}
		}()
	}
	if ev != nil {
		if err = ev.start(j, s, cp); err != nil {
			return err
		}
	}
	out, err := openSink(j, s)
	if err != nil {
		return err
	}
	if err := beforeLoad(j, s, cp, fl); err != nil {
		return err
	}
	if !o.Resume && out.ds != nil && !out.created {
		noteRerun(j, s)
	}
	if err := fl.begin(j, s, cp); err != nil {
		return err
	}
	if err := rejects.Start(); err != nil {
		return err
	}
	var sum *pipeline.Summary
	if ev != nil {
		ev.follow(j, s, cp, fl, rejects, rf)
	} else {
		sum, err = fullLoad(j, s, cp, out, rejects, fl != nil)
	}
	if err != nil {
		return err
	}
	if err := afterLoad(j, s, cp, fl, out, rejects, rf); err != nil {
		return err
	}
	if err := ev.stopped(j); err != nil {
		return err
	}
	if err := rejects.Close(); err != nil {
		return err
	}
	var loadRejected int64
	if sum != nil {
		loadRejected = sum.Total().Rejected
	}
	if n := loadRejected + fl.rejected() + ev.rejectedRows(); n > 0 {
		return rejected(fmt.Errorf("%d rows rejected: see %s", n, rejects.path))
	}
	return nil
}

// check refuses options that do not go together, as an *OptionError.
func (o MigrateOptions) check(cfg Config) error {
	n := cfg.name
	switch {
	case o.Shard.On() && o.Follow:
		return optionError(n(OptShard)+" with "+n(OptFollow)+": one follow keeps the whole table in step; follow after the shards are done, from one process", OptShard, OptFollow)
	case o.Prune && o.ChangesOnly:
		return optionError(n(OptChangesOnly)+" with "+n(OptPrune)+": "+n(OptChangesOnly)+" deletes the stale items itself, each conditional on its type as "+n(OptPrune)+" does; leave out "+n(OptPrune), OptChangesOnly, OptPrune)
	case o.PreviousMapping != "" && !o.ChangesOnly && !(o.Follow && o.Resume):
		return optionError(n(OptPreviousMapping)+" needs "+n(OptChangesOnly)+", or "+cfg.names(OptFollow, OptResume)+": a new version of the mapping is applied to the table the previous one wrote, by comparing what changes", OptPreviousMapping, OptChangesOnly, OptFollow, OptResume)
	case o.PreviousMapping != "" && o.Prune:
		return optionError(n(OptPreviousMapping)+" with "+n(OptPrune)+": "+n(OptPrune)+" loads every item again; "+n(OptPreviousMapping)+" compares only the entities that change", OptPreviousMapping, OptPrune)
	case o.DropGSIs && o.PreviousMapping == "":
		return optionError(n(OptDropGSIs)+" needs "+n(OptPreviousMapping)+": it deletes the GSIs the previous version of the mapping declares and the new one does not", OptDropGSIs, OptPreviousMapping)
	case (o.Prune || o.ChangesOnly) && o.Sink == "null":
		opt := map[bool]Option{true: OptPrune, false: OptChangesOnly}[o.Prune]
		return optionError(n(opt)+" needs "+n(OptSink)+" dynamodb", opt, OptSink)
	}
	if o.Prune {
		for i, on := range []bool{o.NoVerify, o.DryRun, o.Shard.On()} {
			if opt := []Option{OptNoVerify, OptDryRun, OptShard}[i]; on {
				return optionError(n(OptPrune)+" with "+n(opt)+": prune deletes what a full comparison after the load found stale, and "+n(opt)+" has none", OptPrune, opt)
			}
		}
	}
	if o.ChangesOnly {
		for _, f := range []struct {
			opt Option
			on  bool
			why string
		}{
			{OptFollow, o.Follow, "a follow keeps the table in step itself, from its replication slot; " + n(OptChangesOnly) + " brings a table no follow keeps in step back in line (run it before migrate " + n(OptFollow) + ")"},
			{OptShard, o.Shard.On(), "a shard reads only part of the source, so it cannot tell an item no row derives (stale) from another shard's; run " + n(OptChangesOnly) + " once, unsharded"},
			{OptResume, o.Resume, n(OptChangesOnly) + " keeps no checkpoint: run it again, and its comparison finds what is left"},
		} {
			if f.on {
				return optionError(n(OptChangesOnly)+" with "+n(f.opt)+": "+f.why, OptChangesOnly, f.opt)
			}
		}
	}
	return nil
}

// beforeLoad readies cp: Follow, Resume and Prune load everything again; else a
// resumed run must write into cp's table.
func beforeLoad(j *job, s *session, cp *checkpointFile, fl *following) error {
	reload := fl != nil && fl.resume && j.mig.Prune
	if reload {
		cp.Checkpoint = pipeline.NewCheckpoint(cp.Mapping, cp.Source, cp.Table, s.plans)
		fmt.Fprintln(j.log, j.opt(OptPrune)+": loading every item again, then deleting the stale ones, before following on from the slot")
		// Changes committed before the load's snapshot are in the table once
		// loaded.
		var err error
		if fl.exactFrom, err = follow.CurrentLSN(j.ctx, s.src.Conn()); err != nil {
			return err
		}
	}
	return checkTableIdentity(j, s, cp, j.mig.Resume && !reload)
}

// afterLoad runs Prune then the follow, or a shard's last word, or the verify
// in the load's snapshot.
func afterLoad(j *job, s *session, cp *checkpointFile, fl *following, out sinkOut, rejects *rejectFile, rf *reportFiles) error {
	if fl != nil {
		if j.mig.Prune && s.client != nil {
			done, err := pruneStale(j, s, out)
			if err != nil {
				return err
			}
			done()
		}
		return fl.run(j, s, cp, out, rejects)
	}
	if shard := j.ld.Shard; shard.On() {
		fmt.Fprintf(j.log, "shard %s done; run pg2dynamo verify once every shard is done (the table holds them all)\n", shard)
		return nil
	}
	if s.client == nil || j.mig.NoVerify {
		return nil
	}
	// The same snapshot: what was read is checked, all of it.
	fmt.Fprintln(j.out)
	if j.mig.Prune {
		done, err := pruneStale(j, s, out)
		if err != nil {
			return err
		}
		defer done() // its lists, until the verify's report is written
	}
	return compareAndReport(j, s, report.ModeVerify, 0, j.out, rf)
}

// fullLoad loads every entity from the snapshot begun, resuming cp, into out;
// then saves cp, prints the summary and, unless a follow goes on, closes the
// rejects file.
func fullLoad(j *job, s *session, cp *checkpointFile, out sinkOut, rejects *rejectFile, following bool) (*pipeline.Summary, error) {
	ctx := j.ctx
	prog, closeProg := j.loadProgress()
	if j.wr.Auto == nil {
		j.cfg.Metrics.Writers(j.wr.Concurrency)
	}
	if th, ok := prog.(interface{ Then(string) }); ok && out.ds != nil && !following && !j.mig.NoVerify && !j.ld.Shard.On() {
		// The ETA is the load's; the check after it reads everything again.
		th.Then("verify")
	}
	fmt.Fprintf(j.log, "migrating %s from %s to %s\n", report.Count(len(s.plans), "entity", "entities"), s.src.Name(), out.target)
	describeDuplicateCheck(j, s)
	sum, runErr := pipeline.Run(ctx, pipeline.Postgres(s.src), s.m, s.plans, out.sink, pipeline.Options{
		Concurrency: j.wr.Concurrency, Auto: j.wr.Auto, OnReject: rejects.Write, Progress: prog,
		Readers: j.ld.Readers, MinRangeRows: j.ld.MinRangeRows, SkipDuplicateCheck: j.ld.NoDuplicateCheck,
		Checkpoint: cp.Checkpoint, OnCheckpoint: cp.onCheckpoint, Shard: j.ld.Shard,
	})
	if err := cp.save(); err != nil && runErr == nil {
		runErr = err
	}
	closeProg()
	if sum != nil {
		j.summary(sum, out.stats)
	}
	if !following { // a follow lists rejects too
		if err := rejects.Close(); err != nil && runErr == nil {
			runErr = err
		}
	}
	if runErr != nil && ctx.Err() == nil {
		fmt.Fprintln(j.log, "pg2dynamo: what was read before the error is written (see the summary); fix the cause and run again with "+j.opt(OptResume)+" to finish")
	}
	return sum, runErr
}

// dryRun is migrate with DryRun: pg2dynamo diff (with PreviousMapping, diff
// of the new version), writing nothing.
func dryRun(j *job) error {
	op, err := j.begin(opening{reports: true, dynamo: true})
	if err != nil {
		return err
	}
	defer op.close()
	if j.mig.PreviousMapping != "" {
		return evolveDiff(j, op.s, op.rf)
	}
	if err := op.s.src.Begin(j.ctx); err != nil {
		return err
	}
	return compareAndReport(j, op.s, report.ModeDiff, j.rep.PricePerMillion, j.out, op.rf)
}

// sinkOut is where a migration writes; stats is nil for the null sink.
type sinkOut struct {
	sink   load.Sink
	target string
	stats  func() load.Stats
	// ds is the DynamoDB sink, for its conditional deletes (nil: null sink).
	ds      *load.DynamoDB
	created bool
}

// openSink returns Sink's sink; for DynamoDB it makes sure the table exists and
// sets the retry deadline and write-unit cap.
func openSink(j *job, s *session) (sinkOut, error) {
	if j.wr.Sink == "null" {
		return sinkOut{sink: load.Null{}, target: "the null sink (nothing is written)"}, nil
	}
	m := s.m
	retries := new(atomic.Int64)
	if err := s.dynamo(j, retries); err != nil {
		return sinkOut{}, err
	}
	if err := checkNameToCreate(j, s); err != nil {
		return sinkOut{}, err
	}
	created, err := load.EnsureTable(j.ctx, s.client, m, j.wr.CreateTable)
	if err != nil {
		return sinkOut{}, tableRefused(j.ctx, s.client, m.Table.Name, err)
	}
	if created {
		fmt.Fprintf(j.log, "created table %s\n", m.Table.Name)
	}
	if err := checkOwner(j, s, created); err != nil {
		return sinkOut{}, err
	}
	ds := load.NewDynamoDB(s.client, m.Table.Name, m.Table.PartitionKey, m.Table.SortKey)
	ds.Deadline = j.wr.RetryDeadline
	if b := j.cfg.AWS.MaxBackoff; b > 0 {
		ds.Backoff = retry.NewExponentialJitterBackoff(b)
	}
	if n := j.wr.MaxWriteUnits; n > 0 {
		ds.LimitWriteUnits(n, func(item map[string]types.AttributeValue) int64 { return transform.WriteUnits(m, item) })
	}
	stats := func() load.Stats {
		st := ds.Stats()
		st.Retries = retries.Load()
		return st
	}
	j.meterWrites(ds, stats)
	return sinkOut{sink: ds, ds: ds, created: created, target: "DynamoDB table " + m.Table.Name, stats: stats}, nil
}

// noteRerun says, when the table already holds items of the mapping's types (by
// sample), that ChangesOnly would write only the differences.
func noteRerun(j *job, s *session) {
	sample, err := load.SampleTable(j.ctx, s.client, s.m.Table.Name, s.m.TypeAttribute)
	if err != nil {
		return
	}
	ours := 0
	for t, n := range sample.ByType {
		if slices.ContainsFunc(s.m.Entities, func(e *mapping.Entity) bool { return e.Type == t }) {
			ours += n
		}
	}
	if ours == 0 {
		return
	}
	held := report.Count(int64(ours), "item", "items") + " of the mapping's types"
	if sample.More {
		held = fmt.Sprintf("items of the mapping's types (%d in a sample of %d)", ours, sample.Items)
	}
	fmt.Fprintf(j.log, "table %s already holds %s: this run puts every item again, changed or not; migrate %s writes only the new and changed items and deletes the stale ones (pg2dynamo diff estimates how many, and what they cost)\n",
		s.m.Table.Name, held, j.opt(OptChangesOnly))
}

// keysNotProvenUnique names the entities the run-wide duplicate check covers.
func (s *session) keysNotProvenUnique() []string {
	var names []string
	for i, ok := range transform.KeysUnique(s.m, s.plans) {
		if !ok {
			names = append(names, s.plans[i].Entity().Name)
		}
	}
	return names
}

func describeDuplicateCheck(j *job, s *session) {
	if j.ld.NoDuplicateCheck {
		return
	}
	checked := s.keysNotProvenUnique()
	if len(checked) == 0 {
		fmt.Fprintln(j.log, "duplicate-key check: not needed, every entity's keys are proven unique by the mapping and the tables' unique keys")
		return
	}
	fmt.Fprintf(j.log, "duplicate-key check: on for %s (keys not proven unique: read one after another, so that the earlier row, in mapping then primary-key order, keeps a key; 11 to 21 bytes of memory per item)\n", strings.Join(checked, ", "))
}

// checkTableIdentity records the table's TableId and CreationDateTime in cp or,
// resuming, refuses another table: one deleted and created again, or restored,
// lacks what cp records as loaded.
func checkTableIdentity(j *job, s *session, cp *checkpointFile, resume bool) error {
	if s.client == nil {
		return nil
	}
	td, err := load.DescribeTable(j.ctx, s.client, s.m.Table.Name)
	if err != nil || td == nil {
		return err
	}
	id, created := aws.ToString(td.TableId), aws.ToTime(td.CreationDateTime).UTC()
	if resume && (cp.TableID != "" || !cp.TableCreated.IsZero()) {
		if cp.TableID != id || !cp.TableCreated.Equal(created) {
			again := "migrate " + j.opt(OptPrune) + " without " + j.opt(OptResume)
			if j.mig.Follow {
				again = "migrate " + j.cfg.names(OptFollow, OptResume, OptPrune)
			}
			return refused(fmt.Errorf("%s: table %s is not the one checkpoint %s was written for (that one was created %s, this one %s): it was deleted and created again, or restored, so it lacks what the checkpoint records as loaded; run %s to load every item again and delete the stale ones",
				j.opt(OptResume), s.m.Table.Name, cp.path, cp.TableCreated.Format(time.RFC3339), created.Format(time.RFC3339), again))
		}
		return nil
	}
	cp.TableID, cp.TableCreated = id, created
	return cp.save()
}

// startCheckpoint returns a fresh checkpoint, saved only once the table is
// found so a refused run leaves the file as it was; or, with Resume, the
// recorded one, which must match mapping, table and source.
func startCheckpoint(j *job, mappingFile string, m *mapping.Mapping, source string, plans []*transform.Plan) (*checkpointFile, error) {
	b, err := os.ReadFile(mappingFile)
	if err != nil {
		return nil, err
	}
	fp := pipeline.Fingerprint(b, m.Table.Name)
	if sh := j.ld.Shard; sh.On() {
		fp = pipeline.Fingerprint(b, m.Table.Name+" shard "+sh.String())
	}
	f := &checkpointFile{path: j.mig.Checkpoint, every: j.mig.CheckpointInterval}
	if !j.mig.Resume {
		f.Checkpoint = pipeline.NewCheckpoint(fp, source, m.Table.Name, plans)
		return f, nil
	}
	if f.Checkpoint, err = loadCheckpoint(j, f.path); err != nil {
		return nil, err
	}
	if err := f.Check(fp, source); err != nil {
		prev := j.mig.PreviousMapping
		if prev == "" || f.Check(previousFingerprint(prev, m.Table.Name), source) != nil {
			return nil, refused(fmt.Errorf("%s: checkpoint %s: %w; run without %s to start over (or, when %s is a new version of the mapping the checkpoint was written for, give that one as %s)",
				j.opt(OptResume), f.path, err, j.opt(OptResume), j.opt(OptMapping), j.opt(OptPreviousMapping)))
		}
		fmt.Fprintf(j.log, "resuming from %s, written for the previous version of the mapping (%s)\n", f.path, prev)
		return f, nil
	}
	if names := f.Unplanned(plans); j.ld.Shard.On() && j.ld.Snapshot == "" && len(names) > 0 {
		return nil, refused(fmt.Errorf("%s: checkpoint %s records no ranges of %s (an earlier pg2dynamo recorded them only once written): cut again from this run's snapshot, they would not meet the other shards' ranges, and rows would be read by no shard or by two; give %s the snapshot the shards read (pg2dynamo snapshot hold's), or run every shard again without %s",
			j.opt(OptResume), f.path, strings.Join(names, ", "), j.opt(OptSnapshot), j.opt(OptResume)))
	}
	fmt.Fprintf(j.log, "resuming from %s: %s\n", f.path, strings.Join(f.Describe(plans), ", "))
	return f, f.save()
}

// LoadMapping loads the mapping file; an unreadable file is a usage error. It
// returns context.Cause(ctx) once ctx is done, leaving a blocking read (a FIFO)
// or the YAML parser, which cannot be stopped, to finish in the background.
func LoadMapping(ctx context.Context, path string) (*mapping.Mapping, error) {
	return loadWith(ctx, path, mapping.LoadContext)
}

// loadWith runs load as LoadMapping says.
func loadWith(ctx context.Context, path string, load func(context.Context, string) (*mapping.Mapping, error)) (*mapping.Mapping, error) {
	type loaded struct {
		m   *mapping.Mapping
		err error
	}
	done := make(chan loaded, 1)
	go func() {
		m, err := load(ctx, path)
		done <- loaded{m, err}
	}()
	var l loaded
	select {
	case l = <-done:
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	}
	var pe *fs.PathError
	if errors.As(l.err, &pe) {
		return nil, refused(l.err)
	}
	return l.m, l.err
}

// rejectFile writes rejects as JSON Lines: a new file (outputFile) published
// when the run starts, so it describes the latest run and after a crash holds
// every reject the checkpoint expects; a resumed run's file starts with the
// last one's content and lists no row twice.
type rejectFile struct {
	path string
	mu   sync.Mutex
	f    *outputFile
	enc  *json.Encoder
	// listed counts the rows listed before a resume, by rowID; each absorbs one
	// reject of the same row.
	listed  map[uint64]int
	seed    maphash.Seed
	started bool
	// onWrite, if set, is told the entity of each reject listed.
	onWrite func(entity string)
}

// createRejects creates the rejects file, or with appendTo opens it to append:
// a resumed run reads again from checkpoint positions that trail the earlier
// run, so rows it listed are not listed again. A last line cut short is dropped
// and its row listed anew. Errors are usage errors.
func createRejects(path string, appendTo bool) (*rejectFile, error) {
	r := &rejectFile{path: path, seed: maphash.MakeSeed()}
	f, err := createOutput(path, appendTo)
	if err != nil {
		return nil, refused(fmt.Errorf("rejects file: %w", err))
	}
	if appendTo && f.tmp != "" { // a copy of the last run's file, not a device
		if err := r.readListed(f.f); err != nil {
			f.Discard()
			return nil, refused(fmt.Errorf("rejects file %s: %w", path, err))
		}
	}
	r.f, r.enc = f, json.NewEncoder(f)
	return r, nil
}

// Start publishes the file once the run is past its checks; a run refused
// before leaves the path as it was.
func (r *rejectFile) Start() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.f == nil || r.started {
		return nil
	}
	if err := r.f.Publish(); err != nil {
		return fmt.Errorf("rejects file: %w", err)
	}
	r.started = true
	return nil
}

// abandon publishes the file if Start was called, else discards it.
func (r *rejectFile) abandon() {
	r.mu.Lock()
	started := r.started
	if !started && r.f != nil {
		r.f.Discard()
		r.f = nil
	}
	r.mu.Unlock()
	if started {
		r.Close()
	}
}

// readListed counts f's rows and truncates it after its last whole line.
func (r *rejectFile) readListed(f *os.File) error {
	r.listed = map[uint64]int{}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return err
	}
	br := bufio.NewReader(f)
	var whole int64 // bytes of complete lines
	for {
		line, err := br.ReadBytes('\n')
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		whole += int64(len(line))
		var rej pipeline.Reject
		if json.Unmarshal(line, &rej) == nil {
			r.listed[r.rowID(rej)]++
		}
	}
	if err := f.Truncate(whole); err != nil {
		return err
	}
	_, err := f.Seek(whole, io.SeekStart)
	return err
}

// rowID is a reject's entity and source key, not its reason, which may name a
// duplicate's keeper differently once batches are cut elsewhere.
func (r *rejectFile) rowID(rej pipeline.Reject) uint64 {
	key, _ := json.Marshal(rej.SourceKey) // map keys sorted; values strings or nil
	var h maphash.Hash
	h.SetSeed(r.seed)
	h.WriteString(rej.Entity)
	h.WriteByte(0)
	h.Write(key)
	return h.Sum64()
}

// Write lists rej unless a resumed run's file listed its row; safe for
// concurrent use.
func (r *rejectFile) Write(rej pipeline.Reject) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.listed) > 0 {
		if id := r.rowID(rej); r.listed[id] > 0 {
			r.listed[id]--
			return nil
		}
	}
	if err := r.enc.Encode(rej); err != nil {
		return fmt.Errorf("rejects file %s: %w", r.path, err)
	}
	if r.onWrite != nil {
		r.onWrite(rej.Entity)
	}
	return nil
}

func (r *rejectFile) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.f == nil {
		return nil
	}
	err := r.f.Close()
	r.f = nil
	return err
}
