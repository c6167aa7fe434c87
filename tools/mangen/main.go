// Command mangen writes the manual pages of nrtabi and nrtabi-runtime from
// docs/: one roff page per command page (a page whose first line is
// "# NAME(N)", NAME starting with nrtabi), through the go-md2man renderer.
// `make install` runs it into a temporary directory (docs/make.md#install):
// the pages are built, not committed, so docs/ stays the one source.
//
//	go run ./tools/mangen -docs docs -out DIR
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/cpuguy83/go-md2man/v2/md2man"

	"github.com/nrtabi/nrtabi/internal/regfile"
)

// maxPage bounds one page read: the longest command page is a few tens of
// kilobytes.
const maxPage = 1 << 20

func main() {
	docs := flag.String("docs", "docs", "the directory of the command pages")
	out := flag.String("out", "", "the directory to write NAME.N into (made if missing)")
	flag.Parse()
	if *out == "" || flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "usage: mangen -docs DIR -out DIR")
		os.Exit(2)
	}
	names, err := run(*docs, *out)
	if err != nil {
		fmt.Fprintf(os.Stderr, "mangen: %v\n", err)
		os.Exit(1)
	}
	fmt.Printf("mangen: %d pages in %s\n", len(names), *out)
}

// run renders every command page of docs into out and returns the files
// written.
func run(docs, out string) ([]string, error) {
	pages, err := filepath.Glob(filepath.Join(docs, "*.md"))
	if err != nil {
		return nil, err
	}
	sort.Strings(pages)
	cmds := map[string]bool{} // base names of the command pages, for links
	srcs := map[string][]byte{}
	titles := map[string]title{}
	for _, p := range pages {
		data, err := regfile.ReadFile(p, maxPage)
		if err != nil {
			return nil, err
		}
		t, ok := titleOf(data)
		if !ok {
			continue
		}
		cmds[filepath.Base(p)] = true
		srcs[p], titles[p] = data, t
	}
	if len(srcs) == 0 {
		return nil, fmt.Errorf("%s: no command page (first line \"# nrtabi...(1)\"); name the docs directory", docs)
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return nil, err
	}
	var written []string
	for _, p := range pages {
		data, ok := srcs[p]
		if !ok {
			continue
		}
		t := titles[p]
		roff := md2man.Render(prepare(data, t, cmds))
		name := filepath.Join(out, t.file+"."+t.section)
		if err := writeFile(name, roff); err != nil {
			return nil, err
		}
		written = append(written, name)
	}
	return written, nil
}

// title is a command page's "# nrtabi spec show(1)": the page's file name
// (nrtabi-spec-show) and section.
type title struct{ name, file, section string }

var titleLine = regexp.MustCompile(`^# (nrtabi[a-z -]*)\(([1-8])\)$`)

func titleOf(data []byte) (title, bool) {
	first, _, _ := bytes.Cut(data, []byte("\n"))
	m := titleLine.FindSubmatch(bytes.TrimRight(first, "\r"))
	if m == nil {
		return title{}, false
	}
	name := string(m[1])
	return title{name: name, file: strings.ReplaceAll(name, " ", "-"), section: string(m[2])}, true
}

var link = regexp.MustCompile(`\[([^\]\n]+)\]\(([^)\s]+)\)`)

// prepare makes a page what the renderer reads as a manual page: its
// title a .TH line (no date: the page is the same on every build), a link
// to another command page its NAME(1), any other link its text (a man page
// has no relative links).
func prepare(data []byte, t title, cmds map[string]bool) []byte {
	_, body, _ := bytes.Cut(data, []byte("\n"))
	body = link.ReplaceAllFunc(body, func(m []byte) []byte {
		s := link.FindSubmatch(m)
		file, _, _ := strings.Cut(string(s[2]), "#")
		if cmds[file] {
			ref := strings.TrimSuffix(file, ".md") + "(1)"
			text := strings.Trim(string(s[1]), "`")
			if text == file || strings.Contains(text, ".md") || strings.ReplaceAll(text, " ", "-")+".md" == file {
				return []byte(ref)
			}
			return []byte(string(s[1]) + " (" + ref + ")")
		}
		return s[1]
	})
	head := fmt.Sprintf("# %s %s \"\" \"nrtabi\" \"nrtabi manual\"\n", strings.ToUpper(t.file), t.section)
	return append([]byte(head), body...)
}

// writeFile writes through a temporary file and a rename: a failed run
// leaves no partial page in place of a good one.
func writeFile(name string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(name), ".mangen-*")
	if err != nil {
		return err
	}
	_, werr := tmp.Write(data)
	cerr := tmp.Close()
	if err := errors.Join(werr, cerr); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	if err := os.Rename(tmp.Name(), name); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return nil
}
