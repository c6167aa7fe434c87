// Command nrtabi owns the libnrt ↔ libnccom boundary: it validates and shows
// the per-release spec, generates bindings from it, and checks real binaries
// against it.
//
//	nrtabi spec validate [--release R | --dir D]
//	nrtabi spec show [--release R | --dir D] [--format text|json]
//	nrtabi gen (--release R | --all) [--dir D] --out DIR
//	nrtabi bootstrap [--rank R --nranks N] | --local N
//	nrtabi demo
//
// Run "nrtabi help COMMAND" for a command's flags.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"testing"
)

// Exit statuses shared by every command.
const (
	exitOK    = 0
	exitError = 1 // the input or the tool failed
	exitUsage = 2 // the command line is wrong
)

// command is one subcommand. Multi-word commands ("spec validate") are
// registered under their full name.
type command struct {
	name    string
	summary string
	run     func(args []string, out, errw io.Writer) int
}

var commands = map[string]*command{}

func register(c *command) { commands[c.name] = c }

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

func run(args []string, out, errw io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" && len(args) == 1 {
		usage(errw)
		if len(args) == 0 {
			return exitUsage
		}
		return exitOK
	}
	if args[0] == "help" {
		return run(append(args[1:], "--help"), out, errw)
	}
	// Longest registered prefix wins: "spec validate" before "spec".
	for n := min(len(args), 2); n > 0; n-- {
		if c, ok := commands[strings.Join(args[:n], " ")]; ok {
			return runGuarded(c, args[n:], out, errw)
		}
	}
	fmt.Fprintf(errw, "nrtabi: unknown command %q\n\n", strings.Join(args[:min(len(args), 2)], " "))
	usage(errw)
	return exitUsage
}

// runGuarded runs a command with the one last-resort recover of the tool: a
// panic is a bug in nrtabi (the readers report bad input as errors, never
// by panicking), so it is reported as such, in one line, with exit 1. Under
// tests it panics on, so that no test can pass a bug off as bad input.
func runGuarded(c *command, args []string, out, errw io.Writer) (rc int) {
	defer func() {
		if r := recover(); r != nil {
			if testing.Testing() {
				panic(r)
			}
			fmt.Fprintf(errw, "nrtabi %s: internal error (a bug in nrtabi, not in the input; please report it): %v\n", c.name, strings.ReplaceAll(fmt.Sprint(r), "\n", " "))
			rc = exitError
		}
	}()
	return c.run(args, out, errw)
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: nrtabi COMMAND [flags]")
	fmt.Fprintln(w)
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-16s %s\n", n, commands[n].summary)
	}
	fmt.Fprintln(w, "\nRun 'nrtabi COMMAND --help' for a command's flags.")
}

// newFlags makes a FlagSet that reports errors instead of exiting.
func newFlags(name string, errw io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("nrtabi "+name, flag.ContinueOnError)
	fs.SetOutput(errw)
	return fs
}

// parse parses flags and returns the exit status to use when parsing stops
// the command: -1 to go on.
func parse(fs *flag.FlagSet, args []string) int {
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return exitOK
		}
		return exitUsage
	}
	return -1
}
