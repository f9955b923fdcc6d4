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

// The checks a command makes before it creates or writes anything, and
// the exit code 2 ("nothing was written") of what they refuse.

// checkEndpoint refuses an EndpointURL (or AWS_ENDPOINT_URL_DYNAMODB,
// AWS_ENDPOINT_URL, which set it) that is not an http or https URL with a
// host, as a usage error: the SDK would otherwise fail every request, and
// the preflight report it as a DynamoDB that cannot be reached. "" (the
// region's endpoint) is accepted.
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

// loadForCheck loads the mapping file of a command that checks it against
// its source (connectAndCheck) before it does anything else with it: as
// loadMapping, but a file with problems that still decodes gives its
// mapping (mapping.LoadPartial), whose problems connectAndCheck reports
// with the source's, so that one run says every mistake it can.
func loadForCheck(ctx context.Context, path string) (*mapping.Mapping, error) {
	m, err := loadWith(ctx, path, mapping.LoadPartial)
	if m != nil {
		return m, nil // its problems, if any, go with the source's
	}
	return nil, err
}

// connectAndCheck connects to the command's source (Source or
// DATABASE_URL, else the libpq variables and defaults) and checks the
// mapping against it (pipeline.Prepare), returning the plans. When neither
// Source nor DATABASE_URL is given, a connection that fails, and a
// mapping the database refuses, say which database and user libpq chose,
// and why. A mapping with problems (loadForCheck) is refused with them,
// and with the source's when it could connect (exit 2). The caller closes
// the source.
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

// withSourceNote adds to err, on a line of its own, where libpq's rules
// led when the command names no source: "connected to database root as
// user root on /var/run/postgresql:5432 (libpq defaults: no Source,
// DATABASE_URL or PG* variables)". err is returned as is otherwise.
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

// tableRefused gives migrate's refusal of its table exit code 2, as
// nothing was written: a table that does not fit the mapping
// (load.TableMismatchError), or one that does not exist without
// CreateTable. Other errors are returned as they are.
//
// For a table that does not exist it lists the account's tables in the
// region (ListTables, at most 1,000 names) and names the closest, as a
// typo in Table or table.name is the likely cause.
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

// tableHint is a "did you mean" for a table name among the region's
// tables, or "" (none close, or ListTables failed: the hint is optional).
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

// checkTable runs migrate's check of an existing table (load.CheckTable)
// for a command that only reads it (verify, diff, migrate with DryRun): a
// table migrate would refuse is refused here too, with exit code 2 and
// every difference named, rather than compared item by item. A table that
// does not exist passes (every item is new).
func (s *session) checkTable(j *job) error {
	_, err := load.CheckTable(j.ctx, s.client, s.m)
	var tm *load.TableMismatchError
	if errors.As(err, &tm) {
		return refused(fmt.Errorf("%s: %w; migrate would refuse to write to it", j.command, err))
	}
	return err
}
