package engine

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/pg2dynamo/pg2dynamo/extract"
	"github.com/pg2dynamo/pg2dynamo/internal/suggest"
	"github.com/pg2dynamo/pg2dynamo/load"
	"github.com/pg2dynamo/pg2dynamo/mapping"
	"github.com/pg2dynamo/pg2dynamo/pipeline"
	"github.com/pg2dynamo/pg2dynamo/transform"
)

// checkEndpoint refuses an EndpointURL that is not an http(s) URL with a host,
// which would fail every request; "" is the region's.
func checkEndpoint(j *job, raw string) error {
	if raw == "" {
		return nil
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" {
		return refused(fmt.Errorf("%s %q: expected an http:// or https:// URL with a host, such as http://localhost:8000 (the flag, AWS_ENDPOINT_URL_DYNAMODB or AWS_ENDPOINT_URL)", j.opt(OptEndpointURL), raw))
	}
	return nil
}

// loadForCheck loads the mapping as LoadMapping does, but a file with problems
// that still decodes gives its mapping (mapping.LoadPartial), so
// connectAndCheck reports its problems with the source's in one run.
func loadForCheck(ctx context.Context, path string) (*mapping.Mapping, error) {
	m, err := loadWith(ctx, path, mapping.LoadPartial)
	if m != nil {
		return m, nil // its problems, if any, go with the source's
	}
	return nil, err
}

// connectAndCheck connects to the source and checks the mapping against it
// (pipeline.Prepare), returning the plans. Without Source or DATABASE_URL,
// failures say which database and user libpq chose. The caller closes the
// source.
func connectAndCheck(j *job, m *mapping.Mapping) (*extract.Source, []*transform.Plan, error) {
	src, err := extract.Connect(j.ctx, j.cfg.Source)
	if err != nil {
		err = withSourceNote(j, err, false)
		if problems := m.Problems(); len(problems) > 0 {
			return nil, nil, refused(fmt.Errorf("%w\nnot checked against the source: %w", problems, err))
		}
		return nil, nil, err
	}
	plans, err := pipeline.Prepare(j.ctx, src, m)
	if err != nil {
		src.Close(j.ctx)
		var mes mapping.Errors
		if errors.As(err, &mes) {
			err = withSourceNote(j, err, true)
		}
		return nil, nil, err
	}
	return src, plans, nil
}

// withSourceNote adds to err where libpq's rules led when no source was named:
// "connected to database root as user root on /var/run/postgresql:5432 (libpq
// defaults: …)".
func withSourceNote(j *job, err error, connected bool) error {
	if j.cfg.Source != "" {
		return err
	}
	t, terr := extract.ResolveTarget("")
	if terr != nil {
		return err
	}
	verb := "connected to"
	if !connected {
		verb = "could not connect to"
	}
	why := "libpq defaults: no " + j.opt(OptSource) + ", DATABASE_URL or PG* variables"
	if len(t.Env) > 0 {
		why = "no " + j.opt(OptSource) + " or DATABASE_URL: libpq's " + strings.Join(t.Env, ", ") + " and its defaults"
	}
	return fmt.Errorf("%w\n%s %s (%s)", err, verb, t, why)
}

// tableRefused makes migrate's refusal of its table KindRefused: a table that
// does not fit, or is missing without CreateTable, then naming the closest of
// the region's tables as a likely typo.
func tableRefused(ctx context.Context, client dynamodb.ListTablesAPIClient, name string, err error) error {
	var tm *load.TableMismatchError
	if errors.Is(err, load.ErrTableNotFound) {
		return refused(fmt.Errorf("%w%s", err, tableHint(ctx, client, name)))
	}
	if errors.As(err, &tm) {
		return refused(err)
	}
	return err
}

// tableHint is a "did you mean" among the region's tables, or "".
func tableHint(ctx context.Context, client dynamodb.ListTablesAPIClient, name string) string {
	var names []string
	p := dynamodb.NewListTablesPaginator(client, &dynamodb.ListTablesInput{})
	for p.HasMorePages() && len(names) < 1000 {
		page, err := p.NextPage(ctx)
		if err != nil {
			return ""
		}
		names = append(names, page.TableNames...)
	}
	return suggest.Hint(name, names)
}

// checkTable runs migrate's table check for a command that only reads it,
// refusing what migrate would with every difference named; a missing table
// passes.
func (s *session) checkTable(j *job) error {
	_, err := load.CheckTable(j.ctx, s.client, s.m)
	var tm *load.TableMismatchError
	if errors.As(err, &tm) {
		return refused(fmt.Errorf("%s: %w; migrate would refuse to write to it", j.command, err))
	}
	return err
}
