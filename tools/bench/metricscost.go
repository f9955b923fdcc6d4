package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"strconv"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// (k) is (d), migrate --sink null, with --metrics-addr: the metrics' cost
// on the fastest path pg2dynamo has (extract and transform, nothing
// written), where a cost per item or per batch shows most; against
// DynamoDB it would hide behind the writes. Its runs alternate with (d)'s,
// and each scrapes /metrics once while pg2dynamo runs, halfway through
// the wall of the (d) before it, so that the server is known to have
// served what it counts.

// targetMetrics is (k)'s items/s over (d)'s: within 2%.
const targetMetrics = 0.98

// scrapeResult is one scrape of /metrics during a (k) run.
type scrapeResult struct {
	families int           // metric families served
	rowsRead float64       // pg2dynamo_rows_read_total, summed over its series, at that moment
	after    time.Duration // from the run's start
	err      error         // no scrape succeeded while the run lasted
}

// freeAddr returns a 127.0.0.1 address with a port free now, for
// --metrics-addr (a port pg2dynamo picks itself, with :0, it does not
// print).
func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	addr := ln.Addr().String()
	return addr, ln.Close()
}

// scrapeOnce, from a goroutine, polls addr's /healthz until it answers
// (the server is up), then at the time at from now scrapes /metrics once;
// stop returns what it got, or why it got nothing.
func scrapeOnce(ctx context.Context, addr string, at time.Duration) (stop func() scrapeResult) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan scrapeResult, 1)
	start := time.Now()
	go func() {
		client := &http.Client{Timeout: 5 * time.Second}
		last := fmt.Errorf("no answer from http://%s/healthz while the run lasted", addr)
		t := time.NewTicker(20 * time.Millisecond)
		defer t.Stop()
		for up := false; !up; {
			select {
			case <-ctx.Done():
				done <- scrapeResult{err: last}
				return
			case <-t.C:
			}
			_, err := get(ctx, client, addr, "/healthz")
			last, up = err, err == nil
		}
		select {
		case <-ctx.Done():
			done <- scrapeResult{err: fmt.Errorf("the run ended before %s, when /metrics was to be scraped", at.Round(time.Millisecond))}
			return
		case <-time.After(time.Until(start.Add(at))):
		}
		after := time.Since(start)
		body, err := get(ctx, client, addr, "/metrics")
		if err != nil {
			done <- scrapeResult{err: err}
			return
		}
		parser := expfmt.NewTextParser(model.UTF8Validation)
		fams, err := parser.TextToMetricFamilies(bytes.NewReader(body))
		f := fams["pg2dynamo_rows_read_total"]
		if err == nil && (f == nil || len(f.Metric) == 0) {
			err = errors.New("/metrics has no pg2dynamo_rows_read_total")
		}
		if err != nil {
			done <- scrapeResult{err: err}
			return
		}
		done <- scrapeResult{families: len(fams), rowsRead: sumCounter(f), after: after}
	}()
	return func() scrapeResult {
		cancel()
		return <-done
	}
}

// get returns the body of http://addr/path, an error unless 200 OK.
func get(ctx context.Context, client *http.Client, addr, path string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+path, nil)
	if err != nil {
		return nil, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err == nil && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("%s: %s", path, resp.Status)
	}
	return body, err
}

func sumCounter(f *dto.MetricFamily) float64 {
	total := 0.0
	for _, m := range f.Metric {
		total += m.GetCounter().GetValue()
	}
	return total
}

// metricsRun is one run of (k): migrate with args and --metrics-addr, and
// one scrape of it; a run whose /metrics never answered is an error.
func metricsRun(ctx context.Context, bin, name string, rows int64, scrapeAt time.Duration, args []string) (result, scrapeResult, error) {
	addr, err := freeAddr()
	if err != nil {
		return result{}, scrapeResult{}, err
	}
	stop := scrapeOnce(ctx, addr, scrapeAt)
	k, err := migrate(ctx, bin, "k", name, rows, "", append(args, "--metrics-addr", addr)...)
	sc := stop()
	if err != nil {
		return result{}, sc, err
	}
	if sc.err != nil {
		return result{}, sc, fmt.Errorf("(k): pg2dynamo ran with --metrics-addr %s but /metrics was never scraped: %w", addr, sc.err)
	}
	log.Printf("(k) scraped /metrics %s into the run: %d metric families, pg2dynamo_rows_read_total %s", sc.after.Round(time.Millisecond),
		sc.families, strconv.FormatFloat(sc.rowsRead, 'f', -1, 64))
	return k, sc, nil
}

// metricsTarget is (k)'s line among the targets.
func (r *report) metricsTarget() string {
	kd := medianRatio(r.dRuns, r.kRuns)
	sc := r.kScrapes
	var scraped string
	if len(sc) > 0 {
		rows := ""
		for i, s := range sc {
			if i > 0 {
				rows += ", "
			}
			rows += num(int64(s.rowsRead))
		}
		scraped = fmt.Sprintf("; /metrics scraped once in each run, %d metric families, pg2dynamo_rows_read_total then %s", sc[0].families, rows)
	}
	return fmt.Sprintf("metrics' cost (k), migrate --sink null with --metrics-addr vs without (d), the same fixture, runs alternating: **%.3f** (median of the pairs' ratios: %s), target ≥ %.2f (within 2%%): %s; CPU s per 1M items %.2f vs %.2f, peak RSS %.1f MB vs %.1f MB%s",
		kd, pairRatios(r.dRuns, r.kRuns), targetMetrics, verdict(kd, targetMetrics, true, "", 3),
		r.k.perMillion(r.k.cpu), r.d.perMillion(r.d.cpu), float64(r.k.rssKB)/1024, float64(r.d.rssKB)/1024, scraped)
}

// medianRatio is the median over the pairs (xs[i], ys[i]) of ys[i]'s
// items/s over xs[i]'s.
func medianRatio(xs, ys []result) float64 {
	var q []float64
	for i := range min(len(xs), len(ys)) {
		q = append(q, ys[i].perSecond()/xs[i].perSecond())
	}
	return median(q)
}
