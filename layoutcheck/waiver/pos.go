package waiver

import (
	"strings"
)

// posIndex finds where an entry or a key is written, for errors at
// file:line:col. The decoder keeps no positions of keys, so this reads the
// lines itself; it runs only on a file the decoder accepted.
type posIndex struct {
	name    string
	lines   []string
	entries []int // the line (0-based) of each [[waiver]] header
}

func index(name string, data []byte) *posIndex {
	x := &posIndex{name: name, lines: strings.Split(string(data), "\n")}
	for i, l := range x.lines {
		if header(l) == "waiver" {
			x.entries = append(x.entries, i)
		}
	}
	return x
}

// header is the table name of a [[...]] or [...] line, else "".
func header(l string) string {
	t := strings.TrimSpace(l)
	if !strings.HasPrefix(t, "[") {
		return ""
	}
	t = strings.TrimLeft(t, "[")
	name, _, _ := strings.Cut(t, "]")
	return strings.Trim(strings.TrimSpace(name), `"'`)
}

// entry is the position of the i-th [[waiver]] header.
func (x *posIndex) entry(i int) Pos {
	if i < 0 || i >= len(x.entries) {
		return Pos{x.name, 1, 1}
	}
	l := x.entries[i]
	return Pos{x.name, l + 1, strings.Index(x.lines[l], "[") + 1}
}

// key is the position of key inside the i-th entry (i < 0: any entry),
// or of the entry when the key is not written on a line of its own.
func (x *posIndex) key(table string, i int, key string) Pos {
	from, to := 0, len(x.lines)
	if table == "waiver" && i >= 0 && i < len(x.entries) {
		from = x.entries[i] + 1
		if i+1 < len(x.entries) {
			to = x.entries[i+1]
		}
	}
	for l := from; l < to; l++ {
		if c, ok := keyAt(x.lines[l], key); ok {
			return Pos{x.name, l + 1, c}
		}
	}
	return x.entry(i)
}

// top is the position of a key or table outside any [[waiver]].
func (x *posIndex) top(key string) Pos {
	for l, line := range x.lines {
		if header(line) == key {
			return Pos{x.name, l + 1, strings.Index(line, "[") + 1}
		}
		if c, ok := keyAt(line, key); ok {
			return Pos{x.name, l + 1, c}
		}
	}
	return Pos{x.name, 1, 1}
}

// keyAt: whether line assigns key, and the 1-based column of the key.
func keyAt(line, key string) (int, bool) {
	t := strings.TrimLeft(line, " \t")
	k, _, ok := strings.Cut(t, "=")
	if !ok || strings.Trim(strings.TrimSpace(k), `"'`) != key {
		return 0, false
	}
	return len(line) - len(t) + 1, true
}
