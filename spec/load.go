package spec

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"reflect"
	"sort"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"
)

// source is one release directory.
type source struct {
	fsys         fs.FS
	dir, display string
	budget       *budget // shared by a release and the releases it derives from
}

// LoadFS reads every *.toml file of dir in fsys (sorted by name), merges them
// — onto the release it derives from, if any — and validates the result.
// display prefixes positions in errors. On failure the error is an Errors
// listing every violation.
func LoadFS(fsys fs.FS, dir, display string) (*Spec, error) {
	return load(source{fsys, dir, display, nil}, func(name string) (source, error) {
		return embeddedSource(name)
	})
}

// LoadDir reads a spec from a directory on disk. A parent release named by
// derived_from is looked up next to it first, then among the embedded ones.
func LoadDir(dir string) (*Spec, error) {
	dir = strings.TrimSuffix(dir, "/")
	return LoadDirWithParents(dir, path.Dir(dir))
}

// LoadDirWithParents reads a spec from dir and looks up the releases it
// derives from in root first, then among the embedded ones.
func LoadDirWithParents(dir, root string) (*Spec, error) {
	dir = strings.TrimSuffix(dir, "/")
	return load(source{os.DirFS(dir), ".", dir, nil}, nextTo(root))
}

// nextTo locates a parent release in root first (when root is not ""), then
// among the embedded ones.
func nextTo(root string) func(string) (source, error) {
	return func(name string) (source, error) {
		if root != "" {
			sib := path.Join(root, name)
			if st, err := os.Stat(sib); err == nil && st.IsDir() {
				return source{os.DirFS(sib), ".", sib, nil}, nil
			}
		}
		return embeddedSource(name)
	}
}

func embeddedSource(name string) (source, error) {
	if _, err := fs.Stat(Embedded, name); err != nil {
		return source{}, fmt.Errorf("no release %q, embedded or next to the spec", name)
	}
	return source{Embedded, name, "spec/" + name, nil}, nil
}

func load(src source, locate func(string) (source, error)) (*Spec, error) {
	b := &budget{}
	src.budget, locate = b, withBudget(locate, b)
	s, errs, err := readLayer(src)
	if err != nil {
		return nil, err
	}
	name := path.Base(src.dir)
	if name == "." {
		name = path.Base(src.display)
	}
	return assemble(s, errs, name, locate)
}

// assemble derives, resolves and validates one release layer; name is its
// directory's name, which the release must carry.
func assemble(s *Spec, errs Errors, name string, locate func(string) (source, error)) (*Spec, error) {
	if !fatal(errs) {
		var derr Errors
		var err error
		s, derr, err = derive(s, locate, []string{s.Release.Name})
		if err != nil {
			return nil, err
		}
		errs = append(errs, derr...)
		if s == nil {
			errs.sort()
			return nil, errs.fold()
		}
	}
	// Unknown keys do not stop validation: the rest of the spec still gets checked.
	if !fatal(errs) {
		rerrs := append(s.resolve(), s.resolveAbsent()...)
		errs = append(errs, rerrs...)
		if len(rerrs) == 0 {
			errs = append(errs, s.validate(name)...)
		}
	}
	if len(errs) > 0 {
		errs.sort()
		return nil, errs.fold()
	}
	return s, nil
}

// readLayer reads the files of one directory, without resolving or validating.
func readLayer(src source) (*Spec, Errors, error) {
	if src.budget == nil {
		src.budget = &budget{}
	}
	entries, err := readDirBounded(src.fsys, src.dir, src.display)
	if err != nil {
		return nil, nil, err
	}
	// The bounds are checked on the listed sizes before any file is read
	// or decoded, then again on what was read.
	var listed int64
	for _, e := range entries {
		if !e.IsDir() && strings.HasSuffix(e.Name(), ".toml") {
			if err := src.budget.file(src.display, e, &listed); err != nil {
				return nil, nil, err
			}
		}
	}
	s := &Spec{Dir: src.display, index: map[string]*filePositions{}}
	var errs Errors
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".toml") {
			continue
		}
		data, err := readSpecFile(src.fsys, path.Join(src.dir, e.Name()), path.Join(src.display, e.Name()))
		if err != nil {
			return nil, nil, err
		}
		if err := src.budget.add(src.display, int64(len(data))); err != nil {
			return nil, nil, err
		}
		errs = append(errs, s.addFile(path.Join(src.display, e.Name()), string(data))...)
	}
	if len(s.Files) == 0 {
		return nil, nil, fmt.Errorf("%s holds no *.toml spec files", src.display)
	}
	return s, errs, nil
}

func fatal(errs Errors) bool {
	for _, e := range errs {
		if e.Rule == "syntax" || e.Rule == "decode" {
			return true
		}
	}
	return false
}

func (s *Spec) addFile(name, src string) Errors {
	s.Files = append(s.Files, name)
	if e := checkNesting(name, src); e != nil {
		return Errors{e}
	}
	doc := reflect.New(fileDocType())
	md, err := toml.Decode(src, doc.Interface())
	if err != nil {
		return Errors{decodeError(name, src, err)}
	}
	pos := &filePositions{rows: newPosIndex(), file: name, src: src}
	indexRows(pos.rows, name, src)
	var errs Errors
	if undecoded := md.Undecoded(); len(undecoded) > 0 {
		errs = unknownKeys(name, pos.all(), undecoded)
	}
	return append(errs, s.addDoc(name, doc.Elem(), pos)...)
}

// addDoc adds the rows of one file, decoded or built in memory (a value of
// fileDocType), placing each at its key's line in pos.rows (at the file
// itself when the index has no line).
func (s *Spec) addDoc(name string, doc reflect.Value, pos *filePositions) Errors {
	s.index[name] = pos
	in := fileIndex{name: name, idx: pos.rows}
	var errs Errors
	for i, k := range kinds {
		errs = append(errs, k.add(s, doc.Field(i), in)...)
	}
	if r, ok := decodedRemoval(doc, in); ok {
		s.removals = append(s.removals, r)
	}
	return errs
}

// PosOf locates a key of a row: the key's own line when it is written, else the row.
func (s *Spec) PosOf(f *Fact, key string) Pos {
	if idx := s.fileIndex(f.Pos.File); idx != nil && key != "" {
		if p, ok := idx.find(f.Path + "." + key); ok {
			return p
		}
	}
	return f.Pos
}

func decodeError(file, src string, err error) *Error {
	var pe toml.ParseError
	if errors.As(err, &pe) {
		rule := "syntax"
		if strings.Contains(pe.Message, "incompatible types") || strings.Contains(pe.Message, "cannot decode") || strings.Contains(pe.Message, "out of range") {
			rule = "decode"
			if e := locateMismatch(file, src, pe.LastKey); e != nil {
				return e
			}
		}
		msg := pe.Message
		if pe.Usage != "" {
			msg += " (" + strings.TrimSpace(strings.SplitN(pe.Usage, "\n", 2)[0]) + ")"
		}
		at := Pos{File: file, Line: pe.Position.Line, Col: pe.Position.Col}
		if at.Line == 0 {
			// The decoder gives no line for some errors at the end of the
			// input (an escape cut off by the end of the file): point there.
			at = endPos(file, src)
		}
		return &Error{Pos: at, Rule: rule, Msg: msg}
	}
	// Type mismatches come back as plain errors naming the last key.
	if m := lastKeyRE().FindStringSubmatch(err.Error()); m != nil {
		if e := locateMismatch(file, src, m[1]); e != nil {
			return e
		}
		// The key's type is wrong as a whole (a table where an array of
		// tables belongs): point at its first occurrence.
		if p, ok := firstKeyPos(file, src, m[1]); ok {
			return &Error{Pos: p, Rule: "decode", Msg: err.Error()}
		}
	}
	return &Error{Pos: Pos{File: file, Line: 1, Col: 1}, Rule: "decode", Msg: err.Error()}
}

// endPos is the position just past the last byte of src.
func endPos(file, src string) Pos {
	line := strings.Count(src, "\n") + 1
	last := src[strings.LastIndexByte(src, '\n')+1:]
	return Pos{File: file, Line: line, Col: runeCount(last) + 1}
}

// firstKeyPos is where a dotted key (or a key under it) first appears;
// the decoder matches keys case-insensitively, so the comparison does too.
func firstKeyPos(file, src, key string) (Pos, bool) {
	idx := newPosIndex()
	indexPositions(idx, file, src)
	for _, p := range idx.order {
		plain := stripIndex(p)
		if strings.EqualFold(plain, key) || len(plain) > len(key) && plain[len(key)] == '.' && strings.EqualFold(plain[:len(key)], key) {
			return idx.at[p], true
		}
	}
	return Pos{}, false
}

var lastKeyRE = lazyRE(`\(last key "([^"]+)"\)`)

// unknownKeys reports keys the decoder did not consume, once per occurrence,
// naming the keys the table does accept.
func unknownKeys(file string, idx *posIndex, undecoded []toml.Key) Errors {
	bad := map[string]bool{}
	for _, k := range undecoded {
		bad[k.String()] = true
	}
	var errs Errors
	for _, p := range idx.order {
		if idx.elems[p] {
			continue // an element of an unknown key's array: the key is reported
		}
		plain := stripIndex(p)
		if !bad[plain] {
			continue
		}
		parent := plain[:max(strings.LastIndexByte(plain, '.'), 0)]
		if bad[parent] {
			continue // the enclosing table is already reported
		}
		name := plain[strings.LastIndexByte(plain, '.')+1:]
		msg := fmt.Sprintf("unknown key %q", name)
		if known := knownKeys(parent); len(known) > 0 {
			where := "the top level"
			if parent != "" {
				where = "[" + parent + "]"
			}
			msg += fmt.Sprintf("; %s accepts: %s", where, strings.Join(known, ", "))
			if guess := closest(name, known); guess != "" {
				msg += fmt.Sprintf(" (did you mean %q?)", guess)
			}
		}
		errs = append(errs, &Error{Pos: idx.at[p], Rule: "unknown-key", Msg: msg})
	}
	return errs
}

// knownKeys lists the toml keys accepted under a dotted path of a spec file.
func knownKeys(dotted string) []string {
	t := fileDocType()
	if dotted != "" {
		for _, seg := range strings.Split(dotted, ".") {
			f, ok := fieldByTag(t, seg)
			if !ok {
				return nil
			}
			t = f.Type
			for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice {
				t = t.Elem()
			}
			if t.Kind() != reflect.Struct {
				return nil
			}
		}
	}
	var keys []string
	collectTags(t, &keys)
	sort.Strings(keys)
	return keys
}

func collectTags(t reflect.Type, keys *[]string) {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if f.Anonymous {
			collectTags(f.Type, keys)
			continue
		}
		if tag := strings.Split(f.Tag.Get("toml"), ",")[0]; tag != "" && tag != "-" {
			*keys = append(*keys, tag)
		}
	}
}

func fieldByTag(t reflect.Type, tag string) (reflect.StructField, bool) {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if f.Anonymous {
			if g, ok := fieldByTag(f.Type, tag); ok {
				return g, true
			}
			continue
		}
		if strings.Split(f.Tag.Get("toml"), ",")[0] == tag {
			return f, true
		}
	}
	return reflect.StructField{}, false
}

// closest returns the known key within edit distance 2 of name, if any.
func closest(name string, known []string) string {
	best, bestD := "", 3
	for _, k := range known {
		if d := editDistance(name, k); d < bestD {
			best, bestD = k, d
		}
	}
	return best
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			c := 1
			if a[i-1] == b[j-1] {
				c = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+c)
		}
		prev = cur
	}
	return prev[len(b)]
}

func sortBy[T any](xs []T, key func(T) uint64) {
	sort.SliceStable(xs, func(i, j int) bool { return key(xs[i]) < key(xs[j]) })
}

func itoa(i int) string { return strconv.Itoa(i) }

// locateMismatch finds which occurrence of key has a value of the wrong type.
// The decoder names the key but, for arrays of tables, points at its last
// occurrence; this re-reads the file untyped and checks each occurrence.
func locateMismatch(file, src, key string) *Error {
	var generic map[string]any
	if _, err := toml.Decode(src, &generic); err != nil || key == "" {
		return nil
	}
	want := typeOfKey(key)
	if want == nil {
		return nil
	}
	idx := newPosIndex()
	indexPositions(idx, file, src)
	for _, p := range idx.order {
		if stripIndex(p) != key {
			continue
		}
		v, ok := valueAt(generic, p)
		if !ok {
			continue
		}
		bad, bv, bt := misfit(v, want, p)
		if bad == "" {
			continue
		}
		at, _ := idx.lookup(bad)
		return &Error{Pos: at, Rule: "decode", Msg: fmt.Sprintf("%s = %s: expected %s", bad, shortValue(bv), kindWord(bt))}
	}
	return nil
}

// typeOfKey is the Go type a dotted key of a spec file decodes into.
func typeOfKey(dotted string) reflect.Type {
	t := fileDocType()
	for _, seg := range strings.Split(dotted, ".") {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct {
			return nil
		}
		f, ok := fieldByTag(t, seg)
		if !ok {
			return nil
		}
		t = f.Type
	}
	return t
}

func valueAt(m map[string]any, path string) (any, bool) {
	var cur any = m
	for _, seg := range strings.Split(path, ".") {
		name, rest, _ := strings.Cut(seg, "[")
		mm, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = mm[name]; !ok {
			return nil, false
		}
		for rest != "" {
			num, tail, _ := strings.Cut(rest, "]")
			i, err := strconv.Atoi(num)
			if err != nil {
				return nil, false
			}
			switch a := cur.(type) {
			case []map[string]any:
				if i >= len(a) {
					return nil, false
				}
				cur = a[i]
			case []any:
				if i >= len(a) {
					return nil, false
				}
				cur = a[i]
			default:
				return nil, false
			}
			rest = strings.TrimPrefix(tail, "[")
		}
	}
	return cur, true
}

// misfit returns the path of the first value under v (v itself, or an
// element of a nested array) that does not fit t, with the value and the
// type wanted there; "" when everything fits.
func misfit(v any, t reflect.Type, path string) (string, any, reflect.Type) {
	if !fits(v, t) {
		return path, v, t
	}
	if t.Kind() != reflect.Slice {
		return "", nil, nil
	}
	var elems []any
	switch a := v.(type) {
	case []any:
		elems = a
	case []map[string]any:
		return "", nil, nil // tables: their keys are checked one by one
	}
	for i, e := range elems {
		if p, bv, bt := misfit(e, t.Elem(), path+"["+strconv.Itoa(i)+"]"); p != "" {
			return p, bv, bt
		}
	}
	return "", nil, nil
}

// shortValue prints a value for an error message, cut to one short line.
func shortValue(v any) string {
	s := fmt.Sprintf("%#v", v)
	if len(s) > 60 {
		s = s[:57] + "..."
	}
	return strings.ReplaceAll(s, "\n", " ")
}

func fits(v any, t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		_, ok := v.(int64)
		return ok
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		n, ok := v.(int64)
		return ok && n >= 0
	case reflect.String:
		_, ok := v.(string)
		return ok
	case reflect.Bool:
		_, ok := v.(bool)
		return ok
	case reflect.Slice:
		switch v.(type) {
		case []any, []map[string]any:
			return true
		}
		return false
	case reflect.Struct, reflect.Map, reflect.Pointer:
		_, ok := v.(map[string]any)
		return ok
	}
	return true
}

func kindWord(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return "an integer"
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a non-negative integer"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Slice:
		return "an array"
	}
	return "a table"
}
