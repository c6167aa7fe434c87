package main

import (
	"os"
	"slices"
	"strings"

	"github.com/nrtabi/nrtabi/internal/cli"
	"github.com/nrtabi/nrtabi/spec"
)

// Arguments in the wrong place are named, not opened: "enc_glb_comm: cannot
// open" tells the user nothing about the command line they typed
// (docs/nrtabi.md#arguments-in-the-wrong-place).

// cIdent is what a struct name looks like and a path seldom does: a C
// identifier, [A-Za-z_][A-Za-z0-9_]*.
func cIdent(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || i > 0 && '0' <= c && c <= '9') {
			return false
		}
	}
	return s != ""
}

// missing reports whether arg names no file at all.
func missing(arg string) bool {
	_, err := os.Lstat(arg)
	return os.IsNotExist(err)
}

// isFile reports whether arg names an existing non-directory.
func isFile(arg string) bool {
	st, err := os.Stat(arg)
	return err == nil && !st.IsDir()
}

// specStruct reports whether name is a struct of s by any of its names,
// as check looks them up (name, tag, typedef, TAG_t).
func specStruct(s *spec.Spec, name string) bool {
	if s == nil {
		return false
	}
	bare := strings.TrimSuffix(name, "_t")
	for _, st := range s.Structs {
		for _, n := range append([]string{st.Name, st.Tag}, st.Aliases...) {
			if n != "" && (n == name || strings.TrimSuffix(n, "_t") == bare) {
				return true
			}
		}
	}
	return false
}

// isRelease reports whether arg is an embedded release's name.
func isRelease(arg string) bool { return slices.Contains(spec.Releases(), arg) }

// checkArgOrder refuses a check FILE that is no file but a release name or
// a struct name, saying which flag takes it. structs may be nil.
func checkArgOrder(c *cli.Command, files []string, structs *spec.Spec) error {
	var rest []string
	for _, f := range files {
		if !missing(f) || !cIdent(f) && !isRelease(f) {
			rest = append(rest, f)
		}
	}
	for _, f := range files {
		if !missing(f) {
			continue
		}
		switch {
		case isRelease(f):
			return c.Usagef("%q is a release, not a file; name the spec with --spec: nrtabi check --spec %s %s", f, f, strings.Join(orFile(rest), " "))
		case cIdent(f) && specStruct(structs, f):
			return c.Usagef("%q is a struct of the spec, not a file; to require it: nrtabi check --require %s %s", f, f, strings.Join(orFile(rest), " "))
		}
	}
	return nil
}

// orFile is args, or the placeholder FILE when there are none.
func orFile(args []string) []string {
	if len(args) == 0 {
		return []string{"FILE"}
	}
	return args
}

// showArgOrder refuses `show FILE STRUCT`: the struct comes first.
func showArgOrder(c *cli.Command, pos []string) error {
	if isFile(pos[0]) && missing(pos[1]) && cIdent(pos[1]) {
		return c.Usagef("arguments in the wrong order: %q is a file and %q is not; the struct comes first: nrtabi show %s %s", pos[0], pos[1], pos[1], pos[0])
	}
	return nil
}

// extractArgOrder refuses a struct name given where extract's one FILE
// goes: structs are named with --struct.
func extractArgOrder(c *cli.Command, pos []string) error {
	var file, name string
	for _, p := range pos {
		switch {
		case isFile(p) && file == "":
			file = p
		case missing(p) && cIdent(p) && name == "":
			name = p
		}
	}
	if name == "" || len(pos) > 2 || len(pos) == 2 && file == "" {
		return nil
	}
	if file == "" {
		file = "FILE"
	}
	return c.Usagef("%q is not a file; a struct is named with --struct: nrtabi extract --struct %s %s", name, name, file)
}
