package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"

	"github.com/nrtabi/nrtabi/spec"
)

// Shell completion (docs/nrtabi-completion.md): `BINARY completion
// bash|zsh|fish` prints a script, and the script asks `BINARY __complete
// WORD...` for the candidates of the last word, so commands, flags and
// their values come from this registry and the spec, never from a list
// copied into a script. Neither is a listed command: they are for shells,
// not for people, and stay out of the usage and of help's list.
const (
	completionCmd = "completion"
	completeCmd   = "__complete"
)

// The directive is the last line __complete prints: whether the shell
// should offer file names besides the candidates.
const (
	dirFiles   = ":files"
	dirNoFiles = ":nofiles"
)

// complete prints the candidates for the last of words (the words after
// the binary's name, the last one the word being completed, maybe empty),
// one a line, then the directive.
func (a *App) complete(ctx context.Context, words []string, out io.Writer) int {
	if len(words) == 0 {
		words = []string{""}
	}
	cur, done := words[len(words)-1], words[:len(words)-1]
	cands, files := a.candidates(ctx, done, cur)
	for _, c := range cands {
		if strings.HasPrefix(c, cur) && !strings.ContainsAny(c, "\n\r") {
			fmt.Fprintln(out, c)
		}
	}
	if files {
		fmt.Fprintln(out, dirFiles)
	} else {
		fmt.Fprintln(out, dirNoFiles)
	}
	return ExitOK
}

func (a *App) candidates(ctx context.Context, done []string, cur string) ([]string, bool) {
	if len(done) == 0 {
		return a.topWords(), false
	}
	switch {
	case done[0] == "help" && len(done) == 1:
		return a.topWords()[1:], false
	case done[0] == "help" && len(done) == 2 && a.isGroup(done[1]):
		return a.groupWords(done[1]), false
	case done[0] == "help":
		return nil, false
	case done[0] == completionCmd && len(done) == 1:
		return []string{"bash", "zsh", "fish"}, false
	}
	c, rest := a.commandOf(done)
	if c == nil {
		if len(done) == 1 && a.isGroup(done[0]) {
			return a.groupWords(done[0]), false
		}
		return nil, false
	}
	flags := c.flagSet(ctx)
	// The value of the flag before the word being completed.
	if n := len(rest); n > 0 && strings.HasPrefix(rest[n-1], "-") && !strings.Contains(rest[n-1], "=") {
		if f := flags.Lookup(strings.TrimLeft(rest[n-1], "-")); f != nil && !isBool(f) {
			return c.values(f.Name, rest)
		}
	}
	if strings.HasPrefix(cur, "-") {
		var names []string
		flags.VisitAll(func(f *flag.Flag) { names = append(names, flagSpelling(f.Name)) })
		return append(names, "-h", "--help"), false
	}
	return c.positional(flags, rest)
}

// commandOf is the command the first words name, and the words after it.
func (a *App) commandOf(words []string) (*Command, []string) {
	for n := min(len(words), 2); n > 0; n-- {
		if c, ok := a.commands[strings.Join(words[:n], " ")]; ok {
			return c, words[n:]
		}
	}
	return nil, nil
}

// flagSet is the command's flags, as its Run registers them: Run is asked
// for -h with its output discarded, and Flags keeps the set it made.
func (c *Command) flagSet(ctx context.Context) *flag.FlagSet {
	c.flags = nil
	func() {
		// A completion answers or stays silent: a command that panics on
		// -h (a bug its own help test reports) completes no flags.
		defer func() { _ = recover() }()
		_ = c.Run(ctx, c, []string{"-h"}, io.Discard, io.Discard)
	}()
	if c.flags == nil {
		return flag.NewFlagSet(c.Name, flag.ContinueOnError)
	}
	return c.flags
}

func isBool(f *flag.Flag) bool {
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

// values are the candidates for a flag's value, from the synopsis'
// placeholder of the flag: a list of words (text|json|junit) is itself,
// NAME a release, STRUCT a struct of the spec the line names.
func (c *Command) values(name string, words []string) ([]string, bool) {
	return c.placeholder(synopsisValue(c.Synopsis, name), words)
}

// placeholder: the candidates for a synopsis placeholder, and whether
// file names are candidates too.
func (c *Command) placeholder(p string, words []string) ([]string, bool) {
	p = strings.TrimSuffix(p, "...")
	paths := strings.Contains(p, "DIR") || strings.Contains(p, "FILE")
	switch {
	case p == "":
		return nil, true
	case strings.Contains(p, "STRUCT"):
		return structNames(specOf(words)), false
	case strings.Contains(p, "NAME"), p == "OLD", p == "NEW":
		return spec.Releases(), true
	case strings.ToLower(p) == p:
		return strings.Split(p, "|"), false
	}
	return nil, paths || p != "N"
}

// positional: the candidates for the next argument, by its placeholder in
// the synopsis (show STRUCT FILE, diff OLD NEW); files where it names
// files or nothing is known.
func (c *Command) positional(flags *flag.FlagSet, rest []string) ([]string, bool) {
	var words []string // the arguments given so far, with flag values taken out
	for i := 0; i < len(rest); i++ {
		w := rest[i]
		if strings.HasPrefix(w, "-") {
			if f := flags.Lookup(strings.TrimLeft(w, "-")); f != nil && !isBool(f) && !strings.Contains(w, "=") {
				i++
			}
			continue
		}
		words = append(words, w)
	}
	ph := positionals(c.Synopsis)
	if len(words) >= len(ph) {
		if len(ph) > 0 && strings.HasSuffix(ph[len(ph)-1], "...") {
			return c.placeholder(ph[len(ph)-1], rest)
		}
		return nil, true
	}
	return c.placeholder(ph[len(words)], rest)
}

// synopsisValue is the placeholder after --name in a synopsis.
func synopsisValue(syn, name string) string {
	f := strings.Fields(strings.NewReplacer("[", " ", "]", " ").Replace(syn))
	for i, w := range f {
		if w == flagSpelling(name) && i+1 < len(f) && !strings.HasPrefix(f[i+1], "-") {
			return f[i+1]
		}
	}
	return ""
}

// positionals are the synopsis' placeholders outside brackets, up to the
// first alternative (" | ").
func positionals(syn string) []string {
	depth := 0
	var b strings.Builder
	for _, r := range syn {
		switch r {
		case '[':
			depth++
		case ']':
			depth--
		default:
			if depth == 0 {
				b.WriteRune(r)
			}
		}
	}
	var out []string
	for _, w := range strings.Fields(b.String()) {
		if w == "|" {
			break
		}
		if strings.HasPrefix(w, "-") || strings.TrimSuffix(w, "...") == "" {
			continue
		}
		out = append(out, w)
	}
	// A flag's placeholder ("--name NEW") is not an argument.
	var args []string
	fields := strings.Fields(b.String())
	for _, w := range out {
		i := slices.Index(fields, w)
		if i > 0 && strings.HasPrefix(fields[i-1], "-") {
			continue
		}
		args = append(args, w)
	}
	return args
}

// specOf is the spec the command line names with --spec (or the default).
func specOf(words []string) string {
	for i, w := range words {
		if v, ok := strings.CutPrefix(w, "--spec="); ok {
			return v
		}
		if w == "--spec" && i+1 < len(words) {
			return words[i+1]
		}
	}
	return spec.Default
}

// structNames are the struct names of a spec; none when it does not load
// (a completion prints no error).
func structNames(v string) []string {
	s, _, err := ResolveTo(v, io.Discard)
	if err != nil {
		return nil
	}
	var out []string
	for _, st := range s.Structs {
		out = append(out, st.Name)
	}
	sort.Strings(out)
	return out
}
