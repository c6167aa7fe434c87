package release

import (
	"bytes"
	"debug/elf"
	"fmt"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/nrtabi/nrtabi/layoutcheck/specmatch"
	"github.com/nrtabi/nrtabi/readers/elfread"
	"github.com/nrtabi/nrtabi/spec"
)

// ObservedNet is what the net plugin's binary shows: its tables (by the
// symbol table, each with its st_size), the name its newest table gives,
// and a version string when its .rodata holds one. Version "" means the
// binary shows none; it is never guessed (docs/nrtabi-release-new.md#the-net-plugin).
type ObservedNet struct {
	Tables  []spec.DataObject // slots = st_size / 8, sorted by name
	Sizes   map[string]uint64 // table -> st_size
	Name    string            // the newest table's name member, "" when unreadable
	Version string            // e.g. "aws-ofi-nccl 1.21.1", "" when not shown
	VerFrom string            // the .rodata string the version is read from
}

// netTables are the plugin tables f exports as defined data objects.
func netTables(t *elfread.DynTable) []*elf.Symbol {
	var out []*elf.Symbol
	seen := map[string]bool{}
	for i := range t.Syms {
		s := &t.Syms[i]
		if strings.HasPrefix(s.Name, spec.NetTablePrefix) && s.Section != elf.SHN_UNDEF && elf.ST_TYPE(s.Info) == elf.STT_OBJECT && !seen[s.Name] {
			seen[s.Name] = true
			out = append(out, s)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// isNetPlugin reports whether o, read from path, plays the net plugin:
// the SONAME the spec names it by (specmatch.DetectRole), else a file of
// that name without a SONAME, else any ncclNetPlugin_v* data object it
// exports — a plugin built under another SONAME (upstream's
// libnccl-net.so) still hands libnccom those tables.
func isNetPlugin(o *elfread.File, path, role string, base *spec.Spec) (bool, error) {
	if role == specmatch.RoleLibnccomNet {
		return true, nil
	}
	if role != specmatch.RoleNone {
		return false, nil
	}
	if f := base.Release.LibNCCOMNet.File; o.SONAME == "" && f != "" && filepath.Base(path) == f {
		return true, nil
	}
	if o.File.Section(".dynsym") == nil {
		return false, nil
	}
	t, err := elfread.ReadDynTable(o)
	if err != nil {
		return false, err
	}
	return len(netTables(t)) > 0, nil
}

// netPlugin reads the plugin's tables, name and version.
func (obs *Observed) netPlugin(o *elfread.File, path string) error {
	t, err := elfread.ReadDynTable(o)
	if err != nil {
		return err
	}
	syms := netTables(t)
	if len(syms) == 0 {
		return elfread.InputErrorf(path, "plays the net plugin (SONAME %q) but exports no %s* data object: build it with its tables, or give another file", o.SONAME, spec.NetTablePrefix)
	}
	n := &ObservedNet{Sizes: map[string]uint64{}}
	for _, s := range syms {
		if s.Size%spec.NetSlotSize != 0 {
			return elfread.InputErrorf(path, "%s is %d bytes, not a whole number of %d-byte members: not a plugin table", s.Name, s.Size, spec.NetSlotSize)
		}
		n.Tables = append(n.Tables, spec.DataObject{Name: s.Name, Addr: s.Value, Slots: int(s.Size / spec.NetSlotSize)})
		n.Sizes[s.Name] = s.Size
	}
	// The newest table's name member (v10 sorts before v6 by name, so by
	// number): the string the plugin calls itself.
	newest := syms[0]
	for _, s := range syms {
		if tableVersion(s.Name) > tableVersion(newest.Name) {
			newest = s
		}
	}
	if ptr, ok := pointerAt(o, newest.Value); ok {
		n.Name, _ = cString(o, ptr)
	}
	n.Version, n.VerFrom = pluginVersion(o)
	obs.Net = n
	return nil
}

// tableVersion is N of ncclNetPlugin_vN, -1 when not a number.
func tableVersion(name string) int {
	v := 0
	rest := strings.TrimPrefix(name, spec.NetTablePrefix)
	if rest == "" || len(rest) > 4 {
		return -1
	}
	for _, c := range rest {
		if c < '0' || c > '9' {
			return -1
		}
		v = v*10 + int(c-'0')
	}
	return v
}

// pointerAt is the pointer the loader leaves at vaddr: a shared object's
// data pointer is a dynamic relocation (R_X86_64_RELATIVE: its addend;
// R_X86_64_64: its symbol's value plus the addend), else the bytes there.
func pointerAt(o *elfread.File, vaddr uint64) (uint64, bool) {
	if o.Machine == elf.EM_X86_64 && o.Class == elf.ELFCLASS64 {
		var syms []elf.Symbol
		for _, s := range o.Sections {
			if s.Type != elf.SHT_RELA || s.Entsize != 24 {
				continue
			}
			data, err := s.Data()
			if err != nil {
				continue
			}
			for i := 0; i+24 <= len(data); i += 24 {
				if o.ByteOrder.Uint64(data[i:]) != vaddr {
					continue
				}
				info := o.ByteOrder.Uint64(data[i+8:])
				addend := o.ByteOrder.Uint64(data[i+16:])
				switch elf.R_X86_64(info & 0xffffffff) {
				case elf.R_X86_64_RELATIVE:
					return addend, true
				case elf.R_X86_64_64:
					if syms == nil {
						syms, _ = o.DynamicSymbols()
					}
					// .dynsym index 0 is the null symbol debug/elf drops.
					if k := int(info>>32) - 1; k >= 0 && k < len(syms) {
						return syms[k].Value + addend, true
					}
				}
				return 0, false
			}
		}
	}
	b, ok := bytesAt(o, vaddr, 8)
	if !ok || len(b) != 8 {
		return 0, false
	}
	return o.ByteOrder.Uint64(b), true
}

// bytesAt is n bytes of o's loaded image at vaddr, from the one
// allocated PROGBITS section that holds them all.
func bytesAt(o *elfread.File, vaddr, n uint64) ([]byte, bool) {
	for _, s := range o.Sections {
		if s.Type != elf.SHT_PROGBITS || s.Flags&elf.SHF_ALLOC == 0 || vaddr < s.Addr || vaddr-s.Addr >= s.Size {
			continue
		}
		data, err := s.Data()
		off := vaddr - s.Addr
		if err != nil || off >= uint64(len(data)) {
			return nil, false
		}
		return data[off:min(off+n, uint64(len(data)))], true
	}
	return nil, false
}

// maxName bounds a plugin's name string.
const maxName = 256

// cString is the NUL-terminated string at vaddr, at most maxName bytes.
func cString(o *elfread.File, vaddr uint64) (string, bool) {
	b, ok := bytesAt(o, vaddr, maxName)
	if !ok {
		return "", false
	}
	i := bytes.IndexByte(b, 0)
	if i < 0 {
		return "", false
	}
	return string(b[:i]), true
}

// versionRE finds a plugin's version where aws-ofi-nccl logs it at init
// ("NET/OFI Initializing aws-ofi-nccl 1.21.1"): the package name and a
// dotted number. Another plugin may show none; then none is recorded.
var versionRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(aws-ofi-nccl) ([0-9]+(?:\.[0-9]+){1,3}(?:-[0-9A-Za-z.]+)?)`)
})

// pluginVersion is the version .rodata shows and the string it is in.
func pluginVersion(o *elfread.File) (version, from string) {
	s := o.Section(".rodata")
	if s == nil || s.Type != elf.SHT_PROGBITS {
		return "", ""
	}
	data, err := s.Data()
	if err != nil {
		return "", ""
	}
	loc := versionRE().FindSubmatchIndex(data)
	if loc == nil {
		return "", ""
	}
	start := bytes.LastIndexByte(data[:loc[0]], 0) + 1
	end := loc[1] + max(0, bytes.IndexByte(data[loc[1]:min(len(data), loc[1]+maxName)], 0))
	return string(data[loc[2]:loc[3]]) + " " + string(data[loc[4]:loc[5]]), string(data[start:end])
}

// Summary words what the plugin's binary says of itself: its name, its
// version or that it shows none, its tables' sizes (the library row's note).
func (n *ObservedNet) Summary() string {
	name := "its tables' name member is not readable (no relocation or bytes give it)"
	if n.Name != "" {
		name = fmt.Sprintf("its tables name it %s", inputText(n.Name))
		if inputText(n.Name) == n.Name {
			name = fmt.Sprintf("its tables name it %q", n.Name)
		}
	}
	ver := "the binary shows no version string (none recorded, none guessed)"
	if n.Version != "" {
		ver = fmt.Sprintf("version %s, from the .rodata string %s", n.Version, inputText(n.VerFrom))
		if inputText(n.VerFrom) == n.VerFrom {
			ver = fmt.Sprintf("version %s, from the .rodata string %q", n.Version, n.VerFrom)
		}
	}
	var ts []string
	for _, t := range n.Tables {
		ts = append(ts, fmt.Sprintf("%s %d bytes", t.Name, n.Sizes[t.Name]))
	}
	return fmt.Sprintf("%s; %s; tables by st_size: %s", name, ver, strings.Join(ts, ", "))
}
