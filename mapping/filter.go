package mapping

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// Filter is a parsed AccessPattern.Filter: its conditions, all joined by AND or
// all by OR.
type Filter struct {
	Or    bool
	Conds []FilterCond
}

// FilterCond is one filter condition on Attr. Func "": Attr Op Params (=, <>,
// <, <=, >, >= one parameter; between two; in one or more). Func "size":
// size(Attr) Op Params, Op as above but in. Func "begins_with" or "contains":
// one parameter, Op "". Func "attribute_exists" or "attribute_not_exists":
// none. Params are the columns the parameters are sampled from.
type FilterCond struct {
	Func, Attr, Op string
	Params         []string
}

// Filter functions and operators, as DynamoDB spells them.
// https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Expressions.OperatorsAndFunctions.html
var (
	filterComparators = []string{"=", "<>", "<", "<=", ">", ">="}
	filterFuncs       = []string{"size", "begins_with", "contains", "attribute_exists", "attribute_not_exists"}
)

// attrNameRE is an attribute name a filter may name without quoting.
var attrNameRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_-]*$`)

// ParseFilter parses an access pattern's filter (AccessPattern.Filter).
func ParseFilter(s string) (*Filter, error) {
	toks, err := lexCondition(s)
	if err != nil {
		return nil, fmt.Errorf("filter %q: %w", s, err)
	}
	p := &filterParser{toks: toks}
	f := &Filter{}
	for {
		c, err := p.cond()
		if err != nil {
			return nil, fmt.Errorf("filter %q: %w", s, err)
		}
		f.Conds = append(f.Conds, c)
		if p.i == len(toks) {
			return f, nil
		}
		or := p.is("OR")
		if !or && !p.is("AND") {
			return nil, fmt.Errorf("filter %q: expected AND or OR after condition %d, got %q", s, len(f.Conds), toks[p.i].text)
		}
		if len(f.Conds) > 1 && or != f.Or {
			return nil, fmt.Errorf("filter %q: AND and OR mixed: expected the conditions all joined by AND, or all by OR", s)
		}
		f.Or = or
		p.i++
	}
}

type filterParser struct {
	toks []condToken
	i    int
}

func (p *filterParser) is(text string) bool {
	return p.i < len(p.toks) && !p.toks[p.i].quoted && strings.EqualFold(p.toks[p.i].text, text)
}

func (p *filterParser) expect(text string) error {
	if !p.is(text) {
		return p.wanted(fmt.Sprintf("%q", text))
	}
	p.i++
	return nil
}

func (p *filterParser) wanted(what string) error {
	if p.i >= len(p.toks) {
		return fmt.Errorf("expected %s at the end", what)
	}
	return fmt.Errorf("expected %s, got %q", what, p.toks[p.i].text)
}

func (p *filterParser) attr() (string, error) {
	if p.i >= len(p.toks) || p.toks[p.i].quoted || !attrNameRE.MatchString(p.toks[p.i].text) {
		return "", p.wanted("an attribute name")
	}
	p.i++
	return p.toks[p.i-1].text, nil
}

func (p *filterParser) param() (string, error) {
	if p.i < len(p.toks) {
		if t, err := ParseTemplate(p.toks[p.i].text); err == nil && len(t.Parts) == 1 && t.Parts[0].Column != "" && t.Parts[0].Width == WidthAuto {
			p.i++
			return t.Parts[0].Column, nil
		}
	}
	return "", p.wanted("a parameter ${column}")
}

func (p *filterParser) cond() (FilterCond, error) {
	var c FilterCond
	var err error
	if p.i+1 < len(p.toks) && p.toks[p.i+1].text == "(" && !p.toks[p.i+1].quoted {
		c.Func = p.toks[p.i].text
		if !slices.Contains(filterFuncs, c.Func) {
			return c, fmt.Errorf("unknown function %q: expected one of %s", c.Func, strings.Join(filterFuncs, ", "))
		}
		p.i += 2
		if c.Attr, err = p.attr(); err != nil {
			return c, err
		}
		if c.Func == "begins_with" || c.Func == "contains" {
			if err := p.expect(","); err != nil {
				return c, err
			}
			par, err := p.param()
			if err != nil {
				return c, err
			}
			c.Params = []string{par}
		}
		if err := p.expect(")"); err != nil || c.Func != "size" {
			return c, err
		}
	} else if c.Attr, err = p.attr(); err != nil {
		return c, err
	}
	return c, p.comparison(&c)
}

func (p *filterParser) comparison(c *FilterCond) error {
	switch {
	case p.is("BETWEEN"):
		p.i++
		c.Op = "between"
		lo, err := p.param()
		if err != nil {
			return err
		}
		if err := p.expect("AND"); err != nil {
			return err
		}
		hi, err := p.param()
		c.Params = []string{lo, hi}
		return err
	case p.is("IN") && c.Func == "":
		p.i++
		c.Op = "in"
		if err := p.expect("("); err != nil {
			return err
		}
		for {
			par, err := p.param()
			if err != nil {
				return err
			}
			c.Params = append(c.Params, par)
			if p.is(")") {
				p.i++
				return nil
			}
			if err := p.expect(","); err != nil {
				return err
			}
		}
	case p.i < len(p.toks) && !p.toks[p.i].quoted && slices.Contains(filterComparators, p.toks[p.i].text):
		c.Op = p.toks[p.i].text
		p.i++
		par, err := p.param()
		c.Params = []string{par}
		return err
	}
	return p.wanted("a comparison (= <> < <= > >=), BETWEEN or IN")
}

// Columns returns the filter's parameters in order, without repeats.
func (f *Filter) Columns() []string {
	var out []string
	for _, c := range f.Conds {
		for _, p := range c.Params {
			if !slices.Contains(out, p) {
				out = append(out, p)
			}
		}
	}
	return out
}

// Attrs returns the attributes the filter reads, in order, without repeats.
func (f *Filter) Attrs() []string {
	var out []string
	for _, c := range f.Conds {
		if !slices.Contains(out, c.Attr) {
			out = append(out, c.Attr)
		}
	}
	return out
}
