package engine

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/pg2dynamo/pg2dynamo/load"
	"github.com/pg2dynamo/pg2dynamo/mapping"
)

// owner is the mapping's owner tags: name, 16 hex digits of the file's SHA-256,
// and sorted types.
func owner(m *mapping.Mapping, sha256 string) load.Owner {
	var types []string
	for _, e := range m.Entities {
		if !slices.Contains(types, e.Type) {
			types = append(types, e.Type)
		}
	}
	slices.Sort(types)
	return load.Owner{Name: m.Name, Hash: sha256[:min(16, len(sha256))], Types: types}
}

// UnnamedError refuses a run that would create or tag a table with a mapping
// that declares no name: the tags record it, to tell mappings apart. Nothing
// was written.
type UnnamedError struct {
	// File is the mapping file, Table the table, Suggest a name to add.
	File, Table, Suggest string
	// Tagged is the file base name an older pg2dynamo tagged the table with.
	Tagged     string
	allowOther string
}

func (e *UnnamedError) Error() string {
	if e.Tagged != "" {
		allow := e.allowOther
		if allow == "" {
			allow = string(OptAllowOtherMapping)
		}
		return fmt.Sprintf("mapping %s declares no name, and table %s was tagged by an older pg2dynamo for mapping file %s: a table is tagged with its mapping's declared name now; add \"name: %s\" at the top of the mapping if it is that mapping, or pass %s to write into the table anyway; nothing was written",
			e.File, e.Table, e.Tagged, e.Tagged, allow)
	}
	return fmt.Sprintf("mapping %s declares no name: a table it creates is tagged with the mapping's name, which tells its runs from another mapping's; add \"name: %s\" at the top of the mapping (a letter, then letters, digits, '_', '-' or '.'), then run again; nothing was written",
		e.File, e.Suggest)
}

// suggestName is path's base name if valid, else table, else "mapping".
func suggestName(path, table string) string {
	base := filepath.Base(path)
	for _, n := range []string{strings.TrimSuffix(base, filepath.Ext(base)), table} {
		if mapping.ValidMappingName(n) {
			return n
		}
	}
	return "mapping"
}

// checkNameToCreate refuses creating the table with an unnamed mapping.
func checkNameToCreate(j *job, s *session) error {
	if !j.wr.CreateTable || s.m.Name != "" {
		return nil
	}
	td, err := load.DescribeTable(j.ctx, s.client, s.m.Table.Name)
	if err != nil || td != nil {
		return err
	}
	return refused(&UnnamedError{File: j.cfg.Mapping, Table: s.m.Table.Name, Suggest: suggestName(j.cfg.Mapping, s.m.Table.Name)})
}

// checkOwner makes sure, before anything is written, that the table is the
// mapping's and no follow streams into it: a table the run created is tagged; a
// follow's lease refuses (checkLease); another mapping's name refuses unless
// AllowOtherMapping (checkTagged); a table partway through a new version
// refuses all but a run applying one, or a follow resumed with a checkpoint
// recording it done; an untagged table holding none of the mapping's types (by
// sample) refuses unless AllowOtherItems. A follow then takes the lease.
// Without tagging, only the sample is checked.
func checkOwner(j *job, s *session, created bool) error {
	ctx, w, name := j.ctx, j.log, s.m.Table.Name
	mine := owner(s.m, s.mappingSHA256)
	td, err := load.DescribeTable(ctx, s.client, name)
	if err != nil || td == nil {
		return err
	}
	arn := aws.ToString(td.TableArn)
	if created {
		err := load.TagTable(ctx, s.client, arn, mine)
		if errors.Is(err, load.ErrNoTags) {
			fmt.Fprintf(w, "table %s is not tagged as mapping %s's, and no follow's lease can be kept on it: %v\n", name, mine.Name, err)
			return nil
		}
		if err != nil {
			return err
		}
		return takeLease(j, s, arn)
	}
	tags, err := load.TableTags(ctx, s.client, arn)
	switch {
	case errors.Is(err, load.ErrNoTags):
		fmt.Fprintf(w, "cannot read the tags of table %s (%v): no follow's lease can be checked or kept; checking a sample of its items only\n", name, err)
		return checkSample(j, s)
	case err != nil:
		return err
	}
	if err := checkLease(j, s, tags); err != nil {
		return err
	}
	tagged, isTagged := load.OwnerOf(tags)
	e, under := load.EvolvingOf(tags)
	under = under && j.mig.PreviousMapping == ""
	if under && !evolvedByCheckpoint(j, mine, e) {
		return refused(evolvingError(j, name, mine.Name, e))
	}
	if isTagged {
		err = checkTagged(j, s, arn, mine, tagged)
	} else {
		err = checkSample(j, s)
	}
	if err != nil {
		return err
	}
	if under {
		if err := load.TagEvolved(ctx, s.client, arn, mine); err != nil {
			return err
		}
		fmt.Fprintf(w, "table %s: the checkpoint records the change of mapping %s from the version whose SHA-256 begins %s to this one as done; tagged with this one (a GSI only the previous version declares is kept: the change's run again with %s deletes it)\n",
			name, mine.Name, e.From, j.opt(OptDropGSIs))
	}
	return takeLease(j, s, arn)
}

// evolvedByCheckpoint reports whether a follow resumes with the version e
// applies and its checkpoint records e done: only the tags were left when a run
// stopped between the two.
func evolvedByCheckpoint(j *job, mine load.Owner, e load.Evolving) bool {
	return j.mig.Follow && j.mig.Resume && e.To == mine.Hash && j.evolved == e.String()
}

// checkTagged checks a tagged table: the same name is the mapping's (noting a
// changed content); an older pg2dynamo's file base name tag equal to the name
// is upgraded; any other is refused unless AllowOtherMapping.
func checkTagged(j *job, s *session, arn string, mine, tagged load.Owner) error {
	w, name := j.log, s.m.Table.Name
	switch {
	case mine.Same(tagged):
		if tagged.Hash != mine.Hash {
			fmt.Fprintf(w, "table %s was created by mapping %s when its SHA-256 began %s; it is %s now\n", name, tagged.Name, tagged.Hash, mine.Hash)
		}
		return nil
	case tagged.Name == "" && tagged.File != "" && tagged.File == mine.Name:
		fmt.Fprintf(w, "table %s was tagged by an older pg2dynamo for mapping file %s, the name this mapping declares: it is taken as this mapping's, and tagged with its name (%s)\n", name, tagged.File, load.TagName)
		if err := load.UpgradeTags(j.ctx, s.client, arn, mine); err != nil && !errors.Is(err, load.ErrNoTags) {
			return err
		}
		return nil
	case j.wr.AllowOtherMapping:
		fmt.Fprintf(w, "%s: writing into table %s, which mapping %s created\n", j.opt(OptAllowOtherMapping), name, tagged)
		return nil
	case mine.Name == "" && tagged.Name == "":
		return refused(&UnnamedError{File: j.cfg.Mapping, Table: name, Tagged: tagged.File, allowOther: j.opt(OptAllowOtherMapping)})
	case mine.Name == "":
		return refused(fmt.Errorf("table %s belongs to mapping %s (tag %s), and mapping %s declares no name: nothing was written; add \"name: %s\" at the top of the mapping if it is that mapping, give %s another name, or pass %s to write into it anyway",
			name, tagged, load.TagName, j.cfg.Mapping, tagged.Name, j.opt(OptTable), j.opt(OptAllowOtherMapping)))
	}
	return refused(fmt.Errorf("table %s belongs to mapping %s, not %s: nothing was written; give %s another name, or pass %s to write into it anyway",
		name, tagged, mine, j.opt(OptTable), j.opt(OptAllowOtherMapping)))
}

// checkSample refuses an untagged table holding none of the mapping's types, by
// a bounded sample, unless AllowOtherItems.
func checkSample(j *job, s *session) error {
	ctx, w, name := j.ctx, j.log, s.m.Table.Name
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
		fmt.Fprintf(w, "%s: writing into table %s, which holds %s, none of the mapping's types\n", j.opt(OptAllowOtherItems), name, sample)
		return nil
	}
	return refused(fmt.Errorf("table %s is not tagged for a mapping and holds %s, none of the mapping's types (%s): another mapping's or application's table? Nothing was written; give %s another name, or pass %s to write into it anyway",
		name, sample, strings.Join(types, ", "), j.opt(OptTable), j.opt(OptAllowOtherItems)))
}
