package spec

import (
	"io/fs"
	"strconv"
	"strings"
	"sync"
)

// posIndex maps key paths such as "forward[3].params[1].type" to the position
// of the key in its file. toml.MetaData keeps one position per key name, so
// the 37 "forward.slot" keys would share one entry; this scanner keeps them
// apart. It runs only on input that toml.Decode already accepted.
type posIndex struct {
	at    map[string]Pos
	order []string        // every recorded path, in file order
	elems map[string]bool // paths of the elements of array values ("k[3]")
	fold  map[string]Pos  // lower-cased paths, built on the first miss
}

// find returns the position of path as written or, since the decoder
// matches keys case-insensitively ([Release] fills [release]), of the first
// path equal to it but for case.
func (x *posIndex) find(path string) (Pos, bool) {
	if p, ok := x.at[path]; ok {
		return p, true
	}
	if x.fold == nil {
		x.fold = make(map[string]Pos, len(x.order))
		for _, q := range x.order {
			l := strings.ToLower(q)
			if _, ok := x.fold[l]; !ok {
				x.fold[l] = x.at[q]
			}
		}
	}
	p, ok := x.fold[strings.ToLower(path)]
	return p, ok
}

func newPosIndex() *posIndex { return &posIndex{at: map[string]Pos{}, elems: map[string]bool{}} }

// lookup returns the position of path, or of its nearest recorded ancestor.
func (x *posIndex) lookup(path string) (Pos, bool) {
	for path != "" {
		if p, ok := x.find(path); ok {
			return p, true
		}
		i := strings.LastIndexAny(path, ".[")
		if i < 0 {
			break
		}
		path = path[:i]
	}
	return Pos{}, false
}

func (x *posIndex) put(path string, p Pos) {
	if _, ok := x.at[path]; !ok {
		x.order = append(x.order, path)
	}
	x.at[path] = p
	x.fold = nil
}

// stripIndex turns "forward[3].params[1].type" into "forward.params.type".
func stripIndex(path string) string {
	var b strings.Builder
	skip := false
	for _, r := range path {
		switch {
		case r == '[':
			skip = true
		case r == ']':
			skip = false
		case !skip:
			b.WriteRune(r)
		}
	}
	return b.String()
}

type scanner struct {
	file   string
	src    string
	i      int
	line   int
	col    int // runes since the start of the line
	idx    *posIndex
	arrays map[string]int // array-of-tables path -> element count
	// rows skips the keys whose value is a plain scalar (most of a file):
	// what places rows and nested tables (headers, keys holding arrays or
	// inline tables, array elements) is still recorded, at the same
	// positions and in the same order.
	rows bool
}

// indexPositions scans one TOML document, recording every key.
func indexPositions(idx *posIndex, file, src string) {
	scanPositions(idx, file, src, false)
}

// indexRows scans one TOML document, recording only what places its rows
// (see scanner.rows): every load pays for this one, and only an error to
// report asks for the position of a scalar key.
func indexRows(idx *posIndex, file, src string) {
	scanPositions(idx, file, src, true)
}

func scanPositions(idx *posIndex, file, src string, rows bool) {
	s := &scanner{file: file, src: src, line: 1, idx: idx, arrays: map[string]int{}, rows: rows}
	table := ""
	for {
		s.skipSpace(true)
		if s.i >= len(s.src) {
			return
		}
		switch c := s.src[s.i]; {
		case c == '[':
			table = s.header()
		default:
			s.keyValue(table)
		}
	}
}

func (s *scanner) pos() Pos {
	return Pos{File: s.file, Line: s.line, Col: s.col + 1}
}

// advance steps one byte, counting the column in runes as it goes (a
// UTF-8 continuation byte starts no rune), so pos costs O(1).
func (s *scanner) advance() {
	switch c := s.src[s.i]; {
	case c == '\n':
		s.line++
		s.col = 0
	case c&0xc0 != 0x80:
		s.col++
	}
	s.i++
}

// skipSpace skips blanks and comments; newlines too when nl is set.
func (s *scanner) skipSpace(nl bool) {
	for s.i < len(s.src) {
		switch s.src[s.i] {
		case ' ', '\t', '\r':
			s.advance()
		case '\n':
			if !nl {
				return
			}
			s.advance()
		case '#':
			for s.i < len(s.src) && s.src[s.i] != '\n' {
				s.advance()
			}
		default:
			return
		}
	}
}

// header reads [a.b] or [[a.b]] and returns the table path with indices.
func (s *scanner) header() string {
	p := s.pos()
	s.advance()
	array := s.i < len(s.src) && s.src[s.i] == '['
	if array {
		s.advance()
	}
	keys := s.dottedKey()
	s.skipSpace(false)
	for s.i < len(s.src) && s.src[s.i] == ']' {
		s.advance()
	}
	path := ""
	for n, k := range keys {
		path = join(path, k)
		last := n == len(keys)-1
		if last && array {
			s.arrays[path]++
			path += "[" + strconv.Itoa(s.arrays[path]-1) + "]"
		} else if c, ok := s.arrays[path]; ok {
			path += "[" + strconv.Itoa(c-1) + "]"
		}
	}
	s.idx.put(path, p)
	return path
}

func join(a, b string) string {
	if a == "" {
		return b
	}
	return a + "." + b
}

func (s *scanner) dottedKey() []string {
	var keys []string
	for {
		s.skipSpace(false)
		keys = append(keys, s.key())
		s.skipSpace(false)
		if s.i < len(s.src) && s.src[s.i] == '.' {
			s.advance()
			continue
		}
		return keys
	}
}

func (s *scanner) key() string {
	if s.i >= len(s.src) {
		return ""
	}
	switch s.src[s.i] {
	case '"', '\'':
		start := s.i
		s.str()
		k := s.src[start:s.i]
		if uq, err := strconv.Unquote(k); err == nil {
			return uq
		}
		return strings.Trim(k, `'"`)
	}
	start := s.i
	for s.i < len(s.src) {
		c := s.src[s.i]
		if c == '_' || c == '-' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' {
			s.advance()
			continue
		}
		break
	}
	if s.i == start && s.i < len(s.src) {
		s.advance() // never loop on input the decoder would have refused
	}
	return s.src[start:s.i]
}

func (s *scanner) keyValue(table string) {
	p := s.pos()
	keys := s.dottedKey()
	path := table
	for _, k := range keys {
		path = join(path, k)
	}
	s.skipSpace(false)
	if s.i < len(s.src) && s.src[s.i] == '=' {
		s.advance()
	}
	s.skipSpace(false)
	if !s.rows || s.i < len(s.src) && (s.src[s.i] == '[' || s.src[s.i] == '{') {
		s.idx.put(path, p)
	}
	s.value(path)
}

func (s *scanner) value(path string) {
	if s.i >= len(s.src) {
		return
	}
	switch s.src[s.i] {
	case '"', '\'':
		s.str()
	case '[':
		s.advance()
		for n := 0; ; n++ {
			s.skipSpace(true)
			if s.i >= len(s.src) {
				return
			}
			if s.src[s.i] == ']' {
				s.advance()
				return
			}
			el := path + "[" + strconv.Itoa(n) + "]"
			s.idx.put(el, s.pos())
			s.idx.elems[el] = true
			s.value(el)
			s.skipSpace(true)
			if s.i < len(s.src) && s.src[s.i] == ',' {
				s.advance()
			}
		}
	case '{':
		s.advance()
		for {
			s.skipSpace(true)
			if s.i >= len(s.src) {
				return
			}
			if s.src[s.i] == '}' {
				s.advance()
				return
			}
			if s.src[s.i] == ',' {
				s.advance()
				continue
			}
			s.keyValue(path)
		}
	default:
		for s.i < len(s.src) {
			switch s.src[s.i] {
			case ',', ']', '}', '\n', '#':
				return
			}
			s.advance()
		}
	}
}

// str skips a basic, literal or multi-line string.
func (s *scanner) str() {
	q := s.src[s.i]
	if strings.HasPrefix(s.src[s.i:], strings.Repeat(string(q), 3)) {
		s.advance()
		s.advance()
		s.advance()
		end := strings.Index(s.src[s.i:], strings.Repeat(string(q), 3))
		if end < 0 {
			end = len(s.src) - s.i
		}
		stop := s.i + end + 3
		for s.i < stop && s.i < len(s.src) {
			s.advance()
		}
		// A closing run may hold up to two extra quotes that belong to the value.
		for s.i < len(s.src) && s.src[s.i] == q {
			s.advance()
		}
		return
	}
	s.advance()
	for s.i < len(s.src) {
		c := s.src[s.i]
		if c == '\\' && q == '"' {
			s.advance()
			if s.i < len(s.src) {
				s.advance()
			}
			continue
		}
		s.advance()
		if c == q || c == '\n' {
			return
		}
	}
}

// filePositions are the positions of one loaded file: its rows' always, its
// every key's on the first error that asks (Spec.PosOf), indexed from the
// file's text.
type filePositions struct {
	rows *posIndex
	file string
	src  string // "" when there is no text (rows built in memory)
	once sync.Once
	keys *posIndex
}

// all returns the index of every key, building it on first use. It is
// read-only afterwards, so one release may be used from several goroutines.
func (f *filePositions) all() *posIndex {
	f.once.Do(func() {
		if f.src == "" {
			f.keys = f.rows
		} else {
			f.keys = newPosIndex()
			indexPositions(f.keys, f.file, f.src)
		}
		f.keys.find("\x00") // a miss builds the case-folded table now
	})
	return f.keys
}

// embeddedKeys indexes the embedded files on demand for a release that was
// not read by this package's loader (the compiled releases carry their
// rows' positions but no index): one index per file per process.
var embeddedKeys struct {
	mu    sync.Mutex
	files map[string]*posIndex
}

// embeddedIndex is the key index of file ("spec/<release>/<name>.toml"),
// nil when it is not an embedded file.
func embeddedIndex(file string) *posIndex {
	name, ok := strings.CutPrefix(file, "spec/")
	if !ok {
		return nil
	}
	embeddedKeys.mu.Lock()
	defer embeddedKeys.mu.Unlock()
	if idx, ok := embeddedKeys.files[file]; ok {
		return idx
	}
	var idx *posIndex
	if data, err := fs.ReadFile(Embedded, name); err == nil {
		idx = newPosIndex()
		indexPositions(idx, file, string(data))
		idx.find("\x00")
	}
	if embeddedKeys.files == nil {
		embeddedKeys.files = map[string]*posIndex{}
	}
	embeddedKeys.files[file] = idx
	return idx
}

// fileIndex is the index of every key of file: the loaded file's, or for
// a release built outside the loader the embedded file's.
func (s *Spec) fileIndex(file string) *posIndex {
	if f := s.index[file]; f != nil {
		return f.all()
	}
	if s.index == nil {
		return embeddedIndex(file)
	}
	return nil
}
