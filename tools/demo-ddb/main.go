// Command demo-ddb is the DynamoDB side of scripts/demo.sh, for a machine
// without the AWS CLI: it deletes the demo's tables before a run and prints
// one item collection as a Query returns it. It talks only to a local
// DynamoDB-compatible server (--endpoint-url is required), with the
// credentials and region of the environment (AWS_ACCESS_KEY_ID,
// AWS_SECRET_ACCESS_KEY, AWS_REGION; the demo exports dummy ones, and the
// helper uses dummy ones when there are none).
//
//	demo-ddb delete-tables --endpoint-url URL TABLE...
//	demo-ddb find-key --endpoint-url URL --table T --where NAME=VALUE...
//	demo-ddb query --endpoint-url URL --table T [--index I] --pk NAME=VALUE
//	               [--sk-begins-with NAME=PREFIX] [--desc] [--limit N] [--min-items N]
//	               [--type-attribute type]
//
// It is not part of pg2dynamo: the CLI stays a migration tool.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Exit codes: 0 done, 1 a request failed, 2 bad arguments.
const (
	exitOK    = 0
	exitError = 1
	exitUsage = 2
)

const usage = `usage:
  demo-ddb delete-tables --endpoint-url URL TABLE...
  demo-ddb find-key --endpoint-url URL --table T --where NAME=VALUE...
  demo-ddb query --endpoint-url URL --table T [--index I] --pk NAME=VALUE
                 [--sk-begins-with NAME=PREFIX] [--desc] [--limit N] [--min-items N]
                 [--type-attribute type]
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run executes one subcommand with args and returns the exit code; output
// goes to stdout, errors and usage to stderr.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return exitUsage
	}
	var err error
	switch args[0] {
	case "delete-tables":
		err = deleteTablesCmd(ctx, args[1:], stdout, stderr)
	case "find-key":
		err = findKeyCmd(ctx, args[1:], stdout, stderr)
	case "query":
		err = queryCmd(ctx, args[1:], stdout, stderr)
	case "-h", "--help", "help":
		fmt.Fprint(stdout, usage)
		return exitOK
	default:
		fmt.Fprintf(stderr, "demo-ddb: unknown command %q\n%s", args[0], usage)
		return exitUsage
	}
	var ue usageError
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, flag.ErrHelp):
		return exitOK
	case errors.As(err, &ue):
		fmt.Fprintf(stderr, "demo-ddb: %v\n%s", err, usage)
		return exitUsage
	default:
		fmt.Fprintf(stderr, "demo-ddb: %v\n", err)
		return exitError
	}
}

// usageError is a mistake in the arguments (exit code 2).
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

// dummyCredentials are the credentials used when the environment names
// none: a local server takes any (DynamoDB Local wants letters and digits
// only in the access key ID), but the SDK signs every request.
var dummyCredentials = aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
	return aws.Credentials{AccessKeyID: "local", SecretAccessKey: "local", Source: "demo-ddb dummy credentials"}, nil
})

// newClient returns a DynamoDB client for endpoint, which must be set: the
// helper never talks to AWS itself. The credentials are the environment's
// (AWS_ACCESS_KEY_ID or AWS_PROFILE), else dummyCredentials; the region is
// AWS_REGION or the profile's, else us-east-1 (a local server ignores it).
func newClient(ctx context.Context, endpoint string) (*dynamodb.Client, error) {
	if endpoint == "" {
		return nil, usageError{"--endpoint-url is required (a local DynamoDB-compatible server)"}
	}
	var opts []func(*config.LoadOptions) error
	if os.Getenv("AWS_ACCESS_KEY_ID") == "" && os.Getenv("AWS_PROFILE") == "" {
		opts = append(opts, config.WithCredentialsProvider(dummyCredentials))
	}
	cfg, err := config.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("load AWS configuration: %w", err)
	}
	if cfg.Region == "" {
		cfg.Region = "us-east-1"
	}
	return dynamodb.NewFromConfig(cfg, func(o *dynamodb.Options) {
		o.BaseEndpoint = aws.String(endpoint)
	}), nil
}

// deleteTablesCmd deletes each named table that exists and waits until it
// is gone, so that the next CreateTable starts from nothing.
func deleteTablesCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("delete-tables", flag.ContinueOnError)
	fs.SetOutput(stderr)
	endpoint := fs.String("endpoint-url", "", "DynamoDB endpoint URL (required)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	client, err := newClient(ctx, *endpoint)
	if err != nil {
		return err
	}
	for _, table := range fs.Args() {
		deleted, err := deleteTable(ctx, client, table)
		if err != nil {
			return err
		}
		if deleted {
			fmt.Fprintf(stdout, "deleted table %s\n", table)
		} else {
			fmt.Fprintf(stdout, "table %s: not there\n", table)
		}
	}
	return nil
}

// deleteTable deletes table and waits (2 minutes at most) until DescribeTable
// no longer finds it. It reports false, and no error, when the table does
// not exist.
func deleteTable(ctx context.Context, client *dynamodb.Client, table string) (bool, error) {
	_, err := client.DeleteTable(ctx, &dynamodb.DeleteTableInput{TableName: aws.String(table)})
	var notFound *types.ResourceNotFoundException
	if errors.As(err, &notFound) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("delete table %s: %w", table, err)
	}
	waiter := dynamodb.NewTableNotExistsWaiter(client, func(o *dynamodb.TableNotExistsWaiterOptions) {
		o.MinDelay = 100 * time.Millisecond
		o.MaxDelay = 2 * time.Second
	})
	if err := waiter.Wait(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(table)}, 2*time.Minute); err != nil {
		return false, fmt.Errorf("wait for table %s to be deleted: %w", table, err)
	}
	return true, nil
}
