package main

import (
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pg2dynamo/pg2dynamo/engine"
	"github.com/pg2dynamo/pg2dynamo/follow"
	vreport "github.com/pg2dynamo/pg2dynamo/report"
	"github.com/pg2dynamo/pg2dynamo/verify/outcome"
)

func TestSummaryTotal(t *testing.T) {
	for _, tc := range []struct {
		name, out       string
		items, rejected int64
	}{
		{"complete", `
  entity  rows read  rows written  rows rejected  items written  elapsed
     Org        908           908              0            908    120ms
  Ticket     908266        908266              0         908266    40.2s
   total     909174        909174              0         909174    41.0s
12 BatchWriteItem/PutItem requests, 0 retried by the SDK (throttling, 5xx, network), 0 UnprocessedItems re-sends, 12 write units consumed
`, 909174, 0},
		{"stopped", `
  entity  rows read  rows written  rows rejected  not written  items written  elapsed
   total         10             7              2            1              7       1s
`, 7, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			items, rejected, err := summaryTotal(tc.out)
			if err != nil || items != tc.items || rejected != tc.rejected {
				t.Fatalf("summaryTotal = %d, %d, %v; want %d, %d", items, rejected, err, tc.items, tc.rejected)
			}
		})
	}
	if _, _, err := summaryTotal("migrating 3 entities\n"); err == nil {
		t.Fatal("no total row: want an error")
	}
}

func TestAddTraces(t *testing.T) {
	const traces = `File: pg2dynamo
Type: cpu
Duration: 1s, Total samples = 70ms (7%)
-----------+-------------------------------------------------------
      20ms   github.com/pg2dynamo/pg2dynamo/transform.(*Plan).Items
             github.com/pg2dynamo/pg2dynamo/pipeline.Run.func3
-----------+-------------------------------------------------------
      10ms   runtime.scanobject
             runtime.gcDrain
             runtime.gcAssistAlloc
             runtime.mallocgc
             github.com/pg2dynamo/pg2dynamo/transform.(*Plan).Items
-----------+-------------------------------------------------------
      10ms   internal/runtime/syscall/linux.Syscall6
             syscall.Syscall
             github.com/jackc/pgx/v5/pgconn.(*PgConn).peekMessage
-----------+-------------------------------------------------------
      10ms   github.com/aws/aws-sdk-go-v2/service/dynamodb/types.serializeAttributeValue
             github.com/aws/aws-sdk-go-v2/service/dynamodb.(*BatchWriteItemInput).Serialize
             github.com/aws/aws-sdk-go-v2/service/dynamodb.(*serializeRequestMiddleware).HandleSerialize
-----------+-------------------------------------------------------
      20ms   runtime.memmove
             github.com/aws/smithy-go/transport/http.(*ClientHandler).Handle
             github.com/aws/aws-sdk-go-v2/service/dynamodb.(*serializeRequestMiddleware).HandleSerialize
-----------+-------------------------------------------------------
`
	s := &profileSummary{byCat: make([]time.Duration, len(categories))}
	if err := s.addTraces(traces); err != nil {
		t.Fatal(err)
	}
	if s.total != 70*time.Millisecond {
		t.Fatalf("total %s, want 70ms", s.total)
	}
	want := map[string]time.Duration{"GC": 10 * time.Millisecond, "transform": 20 * time.Millisecond, "syscalls": 10 * time.Millisecond,
		"SDK request serialization": 10 * time.Millisecond, "SDK other": 20 * time.Millisecond}
	for prefix, d := range want {
		found := false
		for i, c := range categories {
			if strings.HasPrefix(c.name, prefix) {
				found = true
				if s.byCat[i] != d {
					t.Errorf("%s: %s, want %s", c.name, s.byCat[i], d)
				}
			}
		}
		if !found {
			t.Errorf("no category %q", prefix)
		}
	}
}

func TestVerdict(t *testing.T) {
	for _, tc := range []struct {
		got  string
		want string
	}{
		{verdict(0.74, 0.9, true, "", 2), "**missed by 0.16**"},
		{verdict(0.95, 0.9, true, "", 2), "met (0.05 to spare)"},
		{verdict(9.66, 2, false, " µs", 2), "**missed by 7.66 µs**"},
		{verdict(42, 150, false, " MB", 1), "met (108.0 MB to spare)"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
	if got := num(1234567); got != "1,234,567" {
		t.Errorf("num = %q", got)
	}
}

// (j)'s headline pairs auto with the best fixed setting of its own round,
// not with the best setting's median run: a round where every setting ran
// slow does not count against auto.
func TestAutoVsFixed(t *testing.T) {
	run := func(perSecond float64) writersRun {
		return writersRun{result: result{items: int64(perSecond), wall: time.Second}}
	}
	runs := map[string][]writersRun{
		"auto": {run(90), run(50), run(100)},
		"8":    {run(40), run(20), run(50)},
		"16":   {run(100), run(50), run(90)},
		"32":   {run(95), run(60), run(80)},
		"64":   {run(80), run(55), run(120)},
	}
	ratio, rounds := autoVsFixed(runs)
	if rounds != "0.90, 0.83, 0.83" || math.Abs(ratio-0.833) > 0.001 {
		t.Errorf("autoVsFixed = %.3f (%s), want 0.833 (0.90, 0.83, 0.83)", ratio, rounds)
	}
	runs["auto"] = runs["auto"][:2]
	if ratio, _ := autoVsFixed(runs); math.Abs(ratio-(0.9+50.0/60)/2) > 0.001 {
		t.Errorf("autoVsFixed of two rounds = %.3f, want the mean of the two", ratio)
	}
}

// The bench reads verify's counts from the headline report.Headline
// writes: a report with counts above the lists' lengths parses to them.
func TestVerifyHeadline(t *testing.T) {
	res := &outcome.Result{Table: "tickets", Stale: 3, Counts: outcome.ListCounts{Missing: outcome.ListCount{Total: 2},
		Extra: outcome.ListCount{Total: 3}, Changed: outcome.ListCount{Total: 100000, Listed: 10}}}
	r := vreport.New(vreport.ModeVerify, res, 0)
	r.Totals.Expected = 1000000
	m := verifyHeadline.FindStringSubmatch(r.Headline())
	if m == nil || m[1] != "FAILED" || m[2] != "1000000" || m[3] != "2" || m[4] != "100000" || m[5] != "3" {
		t.Fatalf("headline %q parsed as %q", r.Headline(), m)
	}
}

// TestStatusLine parses the follow's status lines as migrate --follow
// prints them (engine.FollowStatusLine): the counts and the lag of a window
// applied, also on a line printed while the next window is in flight.
func TestStatusLine(t *testing.T) {
	for _, st := range []follow.Status{
		{Applied: 0x1A8DF0B8, Received: 0x1A8DF0B8, Transactions: 251, Changes: 2506, Puts: 2251, Deletes: 250, Lag: 522 * time.Millisecond},
		{LagBytes: 120},
		{Applied: 1<<32 | 2, Received: 1<<32 | 2, Transactions: 3, Changes: 4, Puts: 5, Deletes: 6, Rejected: 7, LagBytes: 8, Lag: time.Minute + 2500*time.Millisecond},
	} {
		line := engine.FollowStatusLine(st, 1250, 1248.4)
		f := newStatusFeed("h")
		f.line(line, time.Now())
		if len(f.all) != 1 {
			t.Fatalf("%q: not read as a status line", line)
		}
		if got := f.all[0]; got.changes != st.Changes || got.puts != st.Puts || got.deletes != st.Deletes || got.lag != st.Lag {
			t.Errorf("%q: got %+v", line, got)
		}
	}
	// While windows overlap, a window's counts show first on the line
	// printed as the next is received: that line counts.
	inFlight := engine.FollowStatusLine(follow.Status{Applied: 0x1A8DF0B8, Received: 0x1B000000, Changes: 9, Puts: 8, Deletes: 1}, 0, 0)
	f := newStatusFeed("h")
	f.line(inFlight, time.Now())
	if len(f.all) != 1 || f.all[0].changes != 9 || f.all[0].puts != 8 || f.all[0].deletes != 1 {
		t.Errorf("%q, a window in flight after one applied: got %+v", inFlight, f.all)
	}
}

// -cases: the cases named, with (d) when (i) or (k) needs it as a
// baseline; an unknown case is an error; no -cases is every case.
func TestCaseSet(t *testing.T) {
	var all caseSet
	if !all.has("h") || !all.suite() {
		t.Error("no -cases: not every case")
	}
	for _, tc := range []struct {
		arg         string
		has, hasNot []string
		suite       bool
	}{
		{"i,k", []string{"i", "k", "d"}, []string{"a", "b", "c", "e", "h", "t", "j", "f"}, true},
		{"j", []string{"j"}, []string{"d", "i"}, false},
		{"a, d", []string{"a", "d"}, []string{"i", "k"}, true},
	} {
		var c caseSet
		if err := c.Set(tc.arg); err != nil {
			t.Fatalf("-cases %s: %v", tc.arg, err)
		}
		for _, k := range tc.has {
			if !c.has(k) {
				t.Errorf("-cases %s: (%s) not measured", tc.arg, k)
			}
		}
		for _, k := range tc.hasNot {
			if c.has(k) {
				t.Errorf("-cases %s: (%s) measured", tc.arg, k)
			}
		}
		if c.suite() != tc.suite {
			t.Errorf("-cases %s: suite() = %v", tc.arg, c.suite())
		}
	}
	var c caseSet
	if err := c.Set("i,x"); err == nil {
		t.Error("-cases i,x: no error")
	}
}

// A lag spike is laid to a Mark-Compact only within lagNearMajor of its
// end, read from node's --trace-gc lines; Scavenges are not Mark-Compacts.
func TestLagSpikes(t *testing.T) {
	d := &dynalite{}
	d.readGC(strings.NewReader(strings.Join([]string{
		"[1:0x1]    1000 ms: Scavenge 900.1 (920.0) -> 890.2 (925.0) MB, 12.50 / 0.00 ms  (average mu = 0.9, current mu = 0.9) allocation failure;",
		"[1:0x1]    2000 ms: Mark-Compact 1900.1 (1950.0) -> 1500.2 (1960.0) MB, 95.79 / 0.00 ms  (+ 1338.9 ms in 212 steps since start of marking, biggest step 9.1 ms, walltime since start of marking 4000 ms) (average mu = 0.8, current mu = 0.7) finalize incremental marking via task; GC in old space requested",
	}, "\n")))
	if len(d.gcs) != 2 {
		t.Fatalf("%d collections read, want 2", len(d.gcs))
	}
	at := d.gcs[1].at
	eb := &evolveBench{majorsAt: d.majorsAt(at.Add(-time.Minute), at.Add(time.Minute))}
	if len(eb.majorsAt) != 1 {
		t.Fatalf("%d Mark-Compacts, want 1", len(eb.majorsAt))
	}
	for _, l := range []struct {
		lag time.Duration
		at  time.Time
	}{
		{lagSpike + time.Second, at.Add(-time.Second)},      // a spike before it ended
		{lagSpike + time.Second, at.Add(2 * time.Second)},   // one just after
		{lagSpike + time.Second, at.Add(-10 * time.Second)}, // one far from it
		{lagSpike, at}, // no spike
	} {
		eb.lags, eb.lagsAt = append(eb.lags, l.lag), append(eb.lagsAt, l.at)
	}
	if spikes, near := eb.lagSpikes(); spikes != 3 || near != 2 {
		t.Errorf("lagSpikes = %d, %d; want 3, 2", spikes, near)
	}
}

// (p) reads the changes the follow applied and the writes the comparison left
// out from the follow's "comparison done" line, which may lack the latter.
func TestEvolveDoneLine(t *testing.T) {
	for line, want := range map[string][]string{
		"comparison done: the follow applied 72179 changes of the stream while it ran; of the comparison's 999962 writes, 41457 puts and 0 deletes left out (the follow had written their keys since the snapshot)": {"72179", "999962", "41457", "0"},
		"comparison done: the follow applied 5 changes of the stream while it ran": {"5", "", "", ""},
	} {
		m := evolveDoneRE.FindStringSubmatch(line)
		if m == nil || !slices.Equal(m[1:], want) {
			t.Errorf("%q: %q, want %q", line, m, want)
		}
	}
}
