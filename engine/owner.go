package engine

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/pg2dynamo/pg2dynamo/load"
)

// owner is the mapping file's owner tags: its base name without extension
// and the first 16 hex digits of its SHA-256.
func owner(path, sha256 string) load.Owner {
	base := filepath.Base(path)
	return load.Owner{Mapping: strings.TrimSuffix(base, filepath.Ext(base)), Hash: sha256[:min(16, len(sha256))]}
}

// checkOwner makes sure the table the run writes into is the mapping's,
// before anything is written: a table the run created is tagged as the
// mapping's (TagResource); a table tagged for another mapping is refused
// unless --allow-other-mapping; an untagged table that holds items, none
// of the mapping's types in a bounded sample, is refused unless
// --allow-other-items. Refusals are usage errors (exit 2). An endpoint
// without tagging is noted and only the sample is checked.
func checkOwner(j *job, s *session, path string, created bool) error {
	ctx, w, name := j.ctx, j.log, s.m.Table.Name
	mine := owner(path, s.mappingSHA256)
	td, err := load.DescribeTable(ctx, s.client, name)
	if err != nil || td == nil {
		return err
	}
	arn := aws.ToString(td.TableArn)
	if created {
		err := load.TagTable(ctx, s.client, arn, mine)
		if errors.Is(err, load.ErrNoTags) {
			fmt.Fprintf(w, "table %s is not tagged as mapping %s's: %v\n", name, mine.Mapping, err)
			return nil
		}
		return err
	}
	tagged, isTagged, err := load.TableOwner(ctx, s.client, arn)
	switch {
	case errors.Is(err, load.ErrNoTags):
		fmt.Fprintf(w, "cannot read the tags of table %s (%v): checking a sample of its items only\n", name, err)
	case err != nil:
		return err
	case isTagged && mine.Same(tagged):
		if tagged.Hash != mine.Hash {
			fmt.Fprintf(w, "table %s was created by mapping %s when its SHA-256 began %s; it is %s now\n", name, tagged.Mapping, tagged.Hash, mine.Hash)
		}
		return nil
	case isTagged && j.wr.AllowOtherMapping:
		fmt.Fprintf(w, "--allow-other-mapping: writing into table %s, which mapping %s (SHA-256 %s…) created\n", name, tagged.Mapping, tagged.Hash)
		return nil
	case isTagged:
		return refused(fmt.Errorf("table %s belongs to mapping %s (tag %s; SHA-256 %s…), not %s (%s…): nothing was written; give --table another name, or pass --allow-other-mapping to write into it anyway",
			name, tagged.Mapping, load.TagMapping, tagged.Hash, mine.Mapping, mine.Hash))
	}
	sample, err := load.SampleTable(ctx, s.client, name, s.m.TypeAttribute)
	if err != nil || sample.Items == 0 {
		return err
	}
	var types []string
	ours := 0
	for _, e := range s.m.Entities {
		if !slices.Contains(types, e.Type) {
			types = append(types, e.Type)
			ours += sample.ByType[e.Type]
		}
	}
	switch {
	case ours > 0:
		fmt.Fprintf(w, "table %s is not tagged for a mapping and holds %s\n", name, sample)
		return nil
	case j.wr.AllowOtherItems:
		fmt.Fprintf(w, "--allow-other-items: writing into table %s, which holds %s, none of the mapping's types\n", name, sample)
		return nil
	}
	return refused(fmt.Errorf("table %s is not tagged for a mapping and holds %s, none of the mapping's types (%s): another mapping's or application's table? Nothing was written; give --table another name, or pass --allow-other-items to write into it anyway",
		name, sample, strings.Join(types, ", ")))
}
