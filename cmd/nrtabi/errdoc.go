package main

import (
	"errors"
	"io"
	"io/fs"
	"strings"

	"github.com/nrtabi/nrtabi/internal/cli"
	"github.com/nrtabi/nrtabi/internal/render"
	"github.com/nrtabi/nrtabi/readers/elfread"
	"github.com/nrtabi/nrtabi/release/diff"
)

// diffSchema is the schema id of diff's JSON document, which its error
// document states too (docs/nrtabi-diff.md).
const diffSchema = diff.Schema

// errDoc makes an error a document in the format asked for: a CI reporter
// reading check's or diff's stdout as JSON or JUnit then shows a failure
// naming the input instead of "no results" (docs/ci.md). The one-line
// message still goes to stderr as in text mode (cli's App.report); the
// document says the same text.
type errDoc struct {
	cmd    *cli.Command
	schema string
	format string // text, json, junit or sarif; "" until the flag is read
	// input is what was being read when the error came; with named, an
	// error that names its own file (inputOf) names it instead.
	input string
	named bool
	// alias shows a temporary file as what the user named (check's
	// compiled headers object as its --headers DIR).
	alias map[string]string
	wrote bool // the command wrote its report
}

// at says the command is at a step whose errors are about in (a flag, a
// spec value).
func (d *errDoc) at(in string) { d.input, d.named = in, false }

// reading says the command reads in: an error naming one file of it (a
// header, a member, a debug file) names that file.
func (d *errDoc) reading(in string) { d.input, d.named = in, true }

// finish writes the error document when the command stops with an error
// (status 1 or 2) in json or junit mode before writing its report, and
// returns err.
func (d *errDoc) finish(err error, out io.Writer) error {
	rc := cli.StatusOf(err)
	if rc != cli.ExitError && rc != cli.ExitUsage || d.wrote || d.format != "json" && d.format != "junit" && d.format != "sarif" {
		return err
	}
	msg := d.cmd.Message(err)
	if msg == "" {
		msg = "failed with no message"
	}
	input := d.input
	if d.named {
		input = inputOf(err, input)
	}
	if a, ok := d.alias[input]; ok {
		input = a
	}
	if input == "" {
		input = "the command line"
	}
	if d.format == "sarif" {
		_ = render.SARIFFailure(out, "nrtabi", cli.ModuleVersion(), input, msg, rc) // docs/sarif.md
		return err
	}
	if d.format == "json" {
		doc := struct {
			Schema string `json:"schema"`
			Error  struct {
				Message string `json:"message"`
				Input   string `json:"input"`
			} `json:"error"`
			Exit int `json:"exit"`
		}{Schema: d.schema, Exit: rc}
		doc.Error.Message, doc.Error.Input = msg, input
		_ = render.JSON(out, doc) // stdout is gone: the status and stderr still say it
		return err
	}
	// One suite, one failed case named after the input: the same document
	// as check's report (render's JUnit), so one reporter reads both.
	first, _, _ := strings.Cut(msg, "\n")
	s := render.Suite{Name: input}
	s.Add(render.Case{Name: input, Classname: "input", Failure: &render.Failure{Message: first, Type: "error", Text: msg}})
	_ = render.JUnit(out, render.Suites{Name: d.cmd.FullName(), Suites: []render.Suite{s}})
	return err
}

// inputOf is the input an error names (an elfread.InputError's file, a
// path error's path), or def.
func inputOf(err error, def string) string {
	var ie *elfread.InputError
	if errors.As(err, &ie) && ie.Path != "" {
		return ie.Path
	}
	var pe *fs.PathError
	if errors.As(err, &pe) && pe.Path != "" {
		return pe.Path
	}
	return def
}
