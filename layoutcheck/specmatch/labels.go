package specmatch

import "sync"

// labels maps a compiled headers object to the provenance the readers print
// for it instead of its temporary path.
var labels sync.Map

// Label is the provenance to print for path: its headers' when it is a
// compiled header set, else the path itself.
func Label(path string) (string, bool) {
	if v, ok := labels.Load(path); ok {
		return v.(string), true
	}
	return path, false
}

// Labelled is paths with each compiled header set named by its headers.
func Labelled(paths []string) []string {
	out := make([]string, len(paths))
	for i, p := range paths {
		out[i], _ = Label(p)
	}
	return out
}

// SetLabel names a compiled headers object by its headers; an empty label
// forgets it (the object is removed).
func SetLabel(path, label string) {
	if label == "" {
		labels.Delete(path)
		return
	}
	labels.Store(path, label)
}
