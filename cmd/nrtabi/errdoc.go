package main

import (
	"bytes"
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
// message still goes to stderr as in text mode; errDoc records it on its
// way there.
type errDoc struct {
	cmd    *cli.Command
	schema string
	format string // text, json or junit; "" until the flag is read
	input  string // what was being read when the error came
	errw   bytes.Buffer
	wrote  bool // the command wrote its report
}

// stderr is the writer the command prints its messages to: errw, recorded.
func (d *errDoc) stderr(errw io.Writer) io.Writer { return io.MultiWriter(errw, &d.errw) }

// finish writes the error document when the command stops with an error
// (status 1 or 2) in json or junit mode before writing its report.
func (d *errDoc) finish(rc int, out io.Writer) int {
	if rc != cli.ExitError && rc != cli.ExitUsage || d.wrote || d.format != "json" && d.format != "junit" {
		return rc
	}
	msg := d.message()
	input := d.input
	if input == "" {
		input = "the command line"
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
		return rc
	}
	// One suite, one failed case named after the input: the same document
	// as check's report (render's JUnit), so one reporter reads both.
	first, _, _ := strings.Cut(msg, "\n")
	s := render.Suite{Name: input}
	s.Add(render.Case{Name: input, Classname: "input", Failure: &render.Failure{Message: first, Type: "error", Text: msg}})
	_ = render.JUnit(out, render.Suites{Name: d.cmd.FullName(), Suites: []render.Suite{s}})
	return rc
}

// message is what the command printed to stderr, without the command's
// name before it and without the usage reminder after it.
func (d *errDoc) message() string {
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(d.errw.String()), "\n") {
		if strings.HasPrefix(l, "usage: ") || strings.Contains(l, ": warning: ") || strings.Contains(l, ": note: ") {
			continue
		}
		lines = append(lines, strings.TrimPrefix(l, d.cmd.FullName()+": "))
	}
	if len(lines) == 0 {
		return "failed with no message"
	}
	return strings.Join(lines, "\n")
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
