// Package cli is the command-line plumbing shared by nrtabi's two binaries
// (cmd/nrtabi, pure Go, and cmd/nrtabi-runtime, which links the cgo
// runtime), one shape for both: main lists the commands (NewApp) and hands
// them to Main, which makes the one context an interrupt ends and passes it
// to the command as a parameter; a command returns an error, which
// App.report alone prints and maps to the exit status (errors.go). Also
// the help, the one list flag type, the one way to name a spec
// (--spec NAME|DIR), and the debuginfod hook of the debug lookup.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"sort"
	"strings"
	"syscall"

	"github.com/nrtabi/nrtabi/internal/esc"
)

// Exit statuses shared by every command.
const (
	ExitOK    = 0
	ExitError = 1 // the input or the tool failed
	ExitUsage = 2 // the command line is wrong
)

// Command is one subcommand. Multi-word commands ("spec validate") are
// listed under their full name; their first word is a group.
type Command struct {
	Name     string
	Summary  string
	Synopsis string // the arguments after the command's name
	Example  string // one command line, without the binary's name
	// Exits lists the exit statuses, for -h; empty is the shared three
	// (ExitOK, ExitError, ExitUsage).
	Exits string
	// Run runs the command under ctx, which an interrupt (SIGINT, SIGTERM)
	// ends: what waits (a child process, a download, a scan) stops with it.
	// Its error is the exit status and the message (App.report, errors.go):
	// nil is 0.
	Run func(ctx context.Context, c *Command, args []string, out, errw io.Writer) error
	app *App
	// flags is the set Flags made last, for completion (complete.go).
	flags *flag.FlagSet
}

// App is one binary's set of commands.
type App struct {
	Name  string // the binary's name, the first word of every message
	About string // one line printed above the command list
	// Fault, when set, names the input behind a memory fault a command's
	// goroutine took (a mapped file truncated under its reader): it gets
	// what recover returned and gives the one-line error to print, or nil
	// when the fault is not in an input (then it is a bug, reported as one).
	Fault func(r any) error
	// BuiltFor, when set, is the release the binary was built for (its
	// -tags nrtabi_release_NAME), which version prints.
	BuiltFor string
	commands map[string]*Command
	// interruptible is set by Main: a command's run watches SIGINT and
	// SIGTERM. The handler is installed when a command runs, not at start:
	// the help answers wait for nothing, and the signal goroutine and its
	// locked thread were a part of every start-up's cost
	// (docs/benchmarks.md#start-up-2026-12-03).
	interruptible bool
}

// NewApp returns the App of these commands and "version". The list is
// explicit, made in main when the binary runs: nothing registers itself
// at start-up.
func NewApp(name, about string, cmds ...*Command) *App {
	a := &App{Name: name, About: about, commands: make(map[string]*Command, len(cmds)+1)}
	a.add(&Command{Name: "version", Summary: "print the module version and the embedded spec releases",
		Example: "version", Run: versionCmd})
	for _, c := range cmds {
		if _, dup := a.commands[c.Name]; dup {
			panic("cli: two commands named " + c.Name) // a bug in main's list
		}
		a.add(c)
	}
	return a
}

func (a *App) add(c *Command) {
	if c.Synopsis == "" && c.Name != "version" {
		c.Synopsis = "[flags]"
	}
	c.app = a
	a.commands[c.Name] = c
}

// Main runs the binary: the command the arguments name, under the one
// context of the process, which SIGINT or SIGTERM ends (the command's child
// processes are killed with their groups, a download or scan stops); a
// second interrupt ends the process at once. It exits with the command's
// status.
func Main(a *App) {
	a.interruptible = true
	os.Exit(a.Run(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
}

// watchInterrupt is the context a command runs under: under Main, one that
// SIGINT or SIGTERM ends; stop restores the signals' default effect.
func (a *App) watchInterrupt(ctx context.Context) (context.Context, context.CancelFunc) {
	if !a.interruptible {
		return ctx, func() {}
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	context.AfterFunc(ctx, stop) // the next interrupt has its default effect
	return ctx, stop
}

// Names lists every command, sorted.
func (a *App) Names() []string {
	names := make([]string, 0, len(a.commands))
	for n := range a.commands {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Groups lists the first words of multi-word commands, sorted.
func (a *App) Groups() []string {
	seen := map[string]bool{}
	var out []string
	for _, n := range a.Names() {
		if g, _, ok := strings.Cut(n, " "); ok && !seen[g] {
			seen[g] = true
			out = append(out, g)
		}
	}
	return out
}

// Run runs the command named by the first words of args under ctx.
func (a *App) Run(ctx context.Context, args []string, out, errw io.Writer) int {
	if len(args) == 0 {
		a.usage(errw)
		return ExitUsage
	}
	if args[0] == "-h" || args[0] == "--help" || args[0] == "-help" || args[0] == "help" && len(args) == 1 {
		a.usage(out)
		return ExitOK
	}
	if args[0] == "--version" || args[0] == "-version" || args[0] == "-V" {
		return a.runGuarded(ctx, a.commands["version"], args[1:], out, errw)
	}
	if args[0] == "help" {
		return a.help(ctx, args[1:], out, errw)
	}
	switch args[0] {
	case completeCmd:
		return a.complete(ctx, args[1:], out)
	case completionCmd:
		return a.completion(args[1:], out, errw)
	}
	// Longest listed prefix wins: "spec validate" before "spec".
	for n := min(len(args), 2); n > 0; n-- {
		if c, ok := a.commands[strings.Join(args[:n], " ")]; ok {
			return a.runGuarded(ctx, c, args[n:], out, errw)
		}
	}
	if a.isGroup(args[0]) {
		if len(args) > 1 && (args[1] == "-h" || args[1] == "--help") {
			a.groupUsage(out, args[0])
			return ExitOK
		}
		if len(args) == 1 {
			a.groupUsage(errw, args[0])
			return ExitUsage
		}
		// One line, not the group's usage: a typo is answered by its fix
		// (docs/nrtabi-help.md).
		what, valid := "command", a.groupWords(args[0])
		if strings.HasPrefix(args[1], "-") {
			what, valid = "flag", []string{"-h", "--help"}
		}
		fmt.Fprintln(errw, esc.String(unknownLine(a.Name+" "+args[0], what, args[1], valid, a.Name+" "+args[0])))
		return ExitUsage
	}
	if strings.HasPrefix(args[0], "-") {
		fmt.Fprintln(errw, esc.String(unknownLine(a.Name, "flag", args[0], []string{"--help", "--version", "-h", "-V"}, a.Name)))
		return ExitUsage
	}
	fmt.Fprintln(errw, esc.String(unknownLine(a.Name, "command", args[0], a.topWords(), a.Name)))
	return ExitUsage
}

// topWords are the words that may follow the binary's name: one-word
// commands, groups and help.
func (a *App) topWords() []string {
	words := []string{"help"}
	for _, n := range a.Names() {
		if !strings.Contains(n, " ") {
			words = append(words, n)
		}
	}
	return append(words, a.Groups()...)
}

// groupWords are the second words of a group's commands.
func (a *App) groupWords(group string) []string {
	var words []string
	for _, n := range a.Names() {
		if w, ok := strings.CutPrefix(n, group+" "); ok {
			words = append(words, w)
		}
	}
	return words
}

// help answers "help CMD" and "help GROUP" on out.
func (a *App) help(ctx context.Context, args []string, out, errw io.Writer) int {
	name := strings.Join(args, " ")
	if c, ok := a.commands[name]; ok {
		return a.runGuarded(ctx, c, []string{"-h"}, out, out)
	}
	if len(args) == 1 && a.isGroup(args[0]) {
		a.groupUsage(out, args[0])
		return ExitOK
	}
	fmt.Fprintln(errw, esc.String(unknownLine(a.Name+" help", "command", name, a.Names(), a.Name)))
	return ExitUsage
}

func (a *App) isGroup(w string) bool {
	for _, g := range a.Groups() {
		if g == w {
			return true
		}
	}
	return false
}

// runGuarded runs a command with the one last-resort recover of the tool: a
// panic is a bug in nrtabi (the readers report bad input as errors, never
// by panicking), so it is reported as such, in one line, with exit 1. Under
// tests it panics on, so that no test can pass a bug off as bad input.
// underTest is whether this is a test binary (go test names it *.test); not
// testing.Testing(), whose package a command would otherwise link and init.
var underTest = strings.HasSuffix(os.Args[0], ".test")

func (a *App) runGuarded(ctx context.Context, c *Command, args []string, out, errw io.Writer) (rc int) {
	// Commands read their inputs on this goroutine only: a fault in a
	// mapped input becomes a panic here instead of a crash (see App.Fault).
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			if a.Fault != nil {
				if err := a.Fault(r); err != nil {
					fmt.Fprintf(errw, "%s %s: %s\n", a.Name, c.Name, esc.String(err.Error()))
					rc = ExitError
					return
				}
			}
			if underTest {
				panic(r)
			}
			fmt.Fprintf(errw, "%s %s: internal error (a bug in nrtabi, not in the input; please report it): %s\n", a.Name, c.Name, esc.String(fmt.Sprint(r)))
			rc = ExitError
		}
	}()
	ctx, stop := a.watchInterrupt(ctx)
	defer stop()
	return a.report(c, c.Run(ctx, c, args, out, errw), errw)
}

// usage is written in one write: a line at a time was a system call each,
// on the path --help times (docs/benchmarks.md#start-up-2026-12-03).
func (a *App) usage(out io.Writer) {
	var w strings.Builder
	fmt.Fprintf(&w, "%s: %s\n\nusage: %s COMMAND [flags] [arguments]\n\n", a.Name, a.About, a.Name)
	a.list(&w, "")
	fmt.Fprintf(&w, "\nRun '%s help COMMAND' (or '%s COMMAND -h') for a command's synopsis, flags and an example.\n", a.Name, a.Name)
	_, _ = io.WriteString(out, w.String()) // a failed write of help has no one left to tell
}

func (a *App) groupUsage(w io.Writer, group string) {
	fmt.Fprintf(w, "usage: %s %s COMMAND [flags] [arguments]\n\n", a.Name, group)
	a.list(w, group+" ")
	for _, n := range a.Names() {
		if strings.HasPrefix(n, group+" ") {
			fmt.Fprintf(w, "\nexample:\n  %s %s\n", a.Name, a.commands[n].Example)
			break
		}
	}
	fmt.Fprintf(w, "\nRun '%s help %s COMMAND' for a command's synopsis, flags and an example.\n", a.Name, group)
}

func (a *App) list(w io.Writer, prefix string) {
	for _, n := range a.Names() {
		if strings.HasPrefix(n, prefix) {
			fmt.Fprintf(w, "  %-18s %s\n", n, a.commands[n].Summary)
		}
	}
}

// FullName is the command's name after the binary's, for messages.
func (c *Command) FullName() string { return c.app.Name + " " + c.Name }

// Flags makes the command's FlagSet: it reports errors instead of exiting,
// and -h prints the synopsis, the summary, the flags and the example to out
// (help is the answer asked for, so it is stdout and exit 0); the set's
// output, for the notes of its flags, is errw.
func (c *Command) Flags(out, errw io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(c.FullName(), flag.ContinueOnError)
	c.flags = fs
	fs.SetOutput(errw)
	fs.Usage = func() {
		fs.SetOutput(out)
		c.PrintUsage(fs)
		fs.SetOutput(errw)
	}
	return fs
}

// PrintUsage prints the command's help to the FlagSet's output.
func (c *Command) PrintUsage(fs *flag.FlagSet) {
	w := fs.Output()
	fmt.Fprintf(w, "usage: %s\n\n%s\n", strings.TrimSpace(c.FullName()+" "+c.Synopsis), c.Summary)
	n := 0
	fs.VisitAll(func(*flag.Flag) { n++ })
	if n > 0 {
		fmt.Fprintln(w, "\nflags:")
		fs.PrintDefaults()
	}
	fmt.Fprintf(w, "\nexample:\n  %s %s\n", c.app.Name, c.Example)
	fmt.Fprintf(w, "\nexit status: %s\n", c.ExitStatuses())
}

// ExitStatuses is the command's list of exit statuses, as -h prints it.
func (c *Command) ExitStatuses() string {
	if c.Exits != "" {
		return c.Exits
	}
	return SharedExits
}

// SharedExits are the statuses every command may return.
const SharedExits = "0 success, 1 error (bad input or a failure), 2 usage error"

// Usagef is a usage error: one line, then the synopsis, and exit 2. The
// message is escaped when printed (package esc): it may carry names and
// bytes from the inputs.
func (c *Command) Usagef(format string, args ...any) error {
	return &Error{Code: ExitUsage, Msg: fmt.Sprintf(format, args...), usage: true}
}

// Errorf is an error of the input or the tool: one line, exit 1. %w wraps
// as fmt.Errorf does, so the input an error names (inputOf) is still found.
func (c *Command) Errorf(format string, args ...any) error {
	e := fmt.Errorf(format, args...)
	return &Error{Code: ExitError, Msg: e.Error(), err: errors.Unwrap(e)}
}

// Parse parses flags that must all come before any argument; any argument
// left is a usage error. A non-nil error stops the command (Stopped: -h
// was answered).
func (c *Command) Parse(fs *flag.FlagSet, args []string) error {
	if err := c.parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return c.Usagef("unexpected argument %q", fs.Arg(0))
	}
	return nil
}

// ParseAnywhere parses flags that may follow positional arguments
// ("nrtabi show NAME FILE --spec R"). It returns the positional arguments,
// or the error to stop with; "--" ends the flags.
func (c *Command) ParseAnywhere(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := c.parse(fs, args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		if rest[0] == "--" {
			return append(pos, rest[1:]...), nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// parse parses flags with Go's flag package, but answers a wrong flag in
// one line naming the nearest valid one (docs/nrtabi.md#description), not
// with the package's message and the whole usage.
func (c *Command) parse(fs *flag.FlagSet, args []string) error {
	w, usage := fs.Output(), fs.Usage
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	err := fs.Parse(args)
	fs.SetOutput(w)
	fs.Usage = usage
	switch {
	case err == nil:
		return nil
	case err == flag.ErrHelp:
		usage()
		return Stopped
	}
	return &Error{Code: ExitUsage, Lines: []string{esc.String(c.flagError(fs, args, err))}}
}

// flagError is the one line for a flag the package refused.
func (c *Command) flagError(fs *flag.FlagSet, args []string, err error) string {
	more := c.FullName()
	msg := err.Error()
	name, undefined := strings.CutPrefix(msg, "flag provided but not defined: -")
	if !undefined {
		return fmt.Sprintf("%s: %s (%s -h for more)", c.FullName(), msg, more)
	}
	// Name the flag as it was typed (one dash or two).
	typed := "-" + name
	for _, a := range args {
		if a == "--"+name || strings.HasPrefix(a, "--"+name+"=") {
			typed = "--" + name
			break
		}
	}
	var valid []string
	fs.VisitAll(func(f *flag.Flag) { valid = append(valid, flagSpelling(f.Name)) })
	return unknownLine(c.FullName(), "flag", typed, valid, more)
}

// flagSpelling is how the docs spell a flag: -I and -o with one dash,
// words with two.
func flagSpelling(name string) string {
	if len(name) == 1 {
		return "-" + name
	}
	return "--" + name
}
