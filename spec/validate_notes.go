package spec

import (
	"fmt"
	"strings"
)

// notes holds the rows that record the spec's own choices — contradictions
// and extensions — to their keys: code, docs and docs/seed-fidelity.md cite
// them by id, so an id must be a slug and name one row of either kind, and
// a row that leaves out what it chose (or what the seed does, what we do
// and why) records nothing (docs/spec-format.md#extensions).
func (c *checker) notes() {
	s := c.s
	for i := range s.Contradictions {
		x := &s.Contradictions[i]
		what := "contradiction " + quoteName(x.ID)
		c.noteID(&x.Fact, x.ID, "contradiction")
		c.noteText(&x.Fact, what, "topic", x.Topic, "the subject in a few words")
		c.noteText(&x.Fact, what, "chosen", x.Chosen, "what the spec does")
		if len(x.Claims) == 0 {
			c.at(&x.Fact, "claims", "required", "%s needs claims: what each source document says, with its section", what)
		}
	}
	contradiction := map[string]*Fact{}
	for i := range s.Contradictions {
		if id := s.Contradictions[i].ID; id != "" && contradiction[id] == nil {
			contradiction[id] = &s.Contradictions[i].Fact
		}
	}
	for i := range s.Extensions {
		x := &s.Extensions[i]
		what := "extension " + quoteName(x.ID)
		c.noteID(&x.Fact, x.ID, "extension")
		if first := contradiction[x.ID]; first != nil {
			c.at(&x.Fact, "id", "unique", "extension %s is also a contradiction id (at %s); contradictions and extensions share one namespace: rename one", quoteName(x.ID), first.Pos)
		}
		c.noteText(&x.Fact, what, "topic", x.Topic, "the subject in a few words")
		c.noteText(&x.Fact, what, "seed", x.Seed, "what the source document does, with its section")
		c.noteText(&x.Fact, what, "ours", x.Ours, "what the project does instead or besides")
		c.noteText(&x.Fact, what, "reason", x.Reason, "why the project departs from the seed")
	}
}

// noteID holds a row id to a slug: lower-case ASCII letters and digits in
// words joined by single hyphens, at most 64 bytes.
func (c *checker) noteID(f *Fact, id, kind string) {
	if id == "" {
		c.at(f, "id", "required", "[[%s]] needs an id (a slug such as %q)", kind, "nec-peer-mla-assert")
		return
	}
	if p := slugProblem(id); p != "" {
		c.at(f, "id", "required", "%s id %s is not a slug: %s", kind, quoteName(id), p)
	}
}

// noteText reports a required free-text key left empty or blank.
func (c *checker) noteText(f *Fact, what, key, v, hint string) {
	if strings.TrimSpace(v) == "" {
		c.at(f, key, "required", "%s needs %s: %s", what, key, hint)
	}
}

// slugProblem says what keeps id from being a slug, "" when it is one.
func slugProblem(id string) string {
	if len(id) > 64 {
		return fmt.Sprintf("it is %d bytes; use at most 64", len(id))
	}
	for i := 0; i < len(id); i++ {
		b := id[i]
		switch {
		case b >= 'a' && b <= 'z', b >= '0' && b <= '9':
		case b == '-':
			if i == 0 || i == len(id)-1 || id[i-1] == '-' {
				return "a hyphen may only join two words; use lower-case letters and digits in words joined by single hyphens"
			}
		default:
			return "use lower-case letters and digits in words joined by single hyphens"
		}
	}
	return ""
}
