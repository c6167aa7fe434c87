package device

import (
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/nrtabi/nrtabi/internal/regfile"
)

// A topology file, as written. Pointers tell "absent" from zero where the
// difference matters.
type fileDoc struct {
	Instance *fileInstance `toml:"instance"`
	Pod      *filePod      `toml:"pod"`
	Device   []fileDevice  `toml:"device"`
	MLA      []fileMLA     `toml:"mla"`
	Core     []fileCore    `toml:"core"`
}

type fileInstance struct {
	Family            string  `toml:"family"`
	FamilyID          *uint32 `toml:"family_id"`
	Size              uint32  `toml:"size"`
	Arch              string  `toml:"arch_name"`
	Revision          string  `toml:"device_revision"`
	VcoreSize         *uint32 `toml:"vcore_size"`
	VirtualServerSize uint32  `toml:"virtual_server_size"`
	PortRemap         []int   `toml:"port_remap"`
	VNCRegime         string  `toml:"vnc_regime"`
}

type filePod struct {
	Type          string `toml:"type"`
	Size          uint32 `toml:"size"`
	Node          uint32 `toml:"node"`
	ReservationID uint64 `toml:"reservation_id"`
}

type fileDevice struct {
	ID        *int   `toml:"id"`
	BDF       string `toml:"bdf"`
	MLA       *int   `toml:"mla"`
	Available *bool  `toml:"available"`
}

type fileMLA struct {
	ID           *int  `toml:"id"`
	RID          *int  `toml:"rid"`
	HostDeviceID *int  `toml:"host_device_id"`
	Available    *bool `toml:"available"`
	Peers        []int `toml:"peers"`
}

type fileCore struct {
	Device *int    `toml:"device"`
	Vtpb   *uint32 `toml:"vtpb"`
}

// Error is a mistake in a topology file: where it is, which field, what is
// wrong and how to fix it.
type Error struct {
	File  string
	Line  int // 0 when the field could not be placed
	Field string
	Msg   string
}

func (e *Error) Error() string {
	// One line whatever the TOML library quotes from the input.
	oneLine := strings.NewReplacer("\n", `\n`, "\r", `\r`)
	return oneLine.Replace(e.text())
}

func (e *Error) text() string {
	at := e.File
	if e.Line > 0 {
		at = fmt.Sprintf("%s:%d", e.File, e.Line)
	}
	if e.Field == "" {
		return fmt.Sprintf("%s: %s", at, e.Msg)
	}
	return fmt.Sprintf("%s: %s: %s", at, e.Field, e.Msg)
}

//go:embed default.toml
var defaultTOML []byte

// DefaultFile names the embedded default topology in messages.
const DefaultFile = "runtime/device/default.toml (embedded)"

// Default is the embedded default topology: four trn2-style devices in a
// ring, in a two-node P2P pod.
func Default(abi ABI) (*Topology, error) {
	return ParseTopology(DefaultFile, defaultTOML, abi)
}

// LoadTopology reads and checks a topology file.
func LoadTopology(path string, abi ABI) (*Topology, error) {
	src, err := readRegular(path)
	if err != nil {
		return nil, fmt.Errorf("topology: %w", err)
	}
	return ParseTopology(path, src, abi)
}

// MaxTopologyBytes bounds a topology file: one instance is a few kilobytes.
const MaxTopologyBytes = 1 << 20

// readRegular reads a regular file of at most MaxTopologyBytes. A FIFO,
// device or directory is refused before any read could block or run on.
func readRegular(path string) ([]byte, error) {
	src, err := regfile.ReadFile(path, MaxTopologyBytes)
	var notReg *regfile.NotRegularError
	var tooLarge *regfile.TooLargeError
	switch {
	case errors.As(err, &notReg):
		return nil, fmt.Errorf("%s is not a regular file (%s); give the path of a topology .toml file", path, notReg.Mode.Type())
	case errors.As(err, &tooLarge):
		return nil, fmt.Errorf("%s is larger than %d bytes; a topology file describes one instance", path, MaxTopologyBytes)
	}
	return src, err
}

// ParseTopology checks a topology file's contents; name is used in messages.
// The first mistake is reported, with its line when it can be found.
func ParseTopology(name string, src []byte, abi ABI) (*Topology, error) {
	// Syntax first, into no particular shape, so a value of the wrong type
	// or range is not blamed on the syntax.
	var raw map[string]any
	if _, err := toml.Decode(string(src), &raw); err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			return nil, &Error{File: name, Line: pe.Position.Line, Msg: pe.Message + " (fix the TOML syntax)"}
		}
		return nil, &Error{File: name, Msg: err.Error()}
	}
	l := &locator{src: string(src)}
	var doc fileDoc
	md, err := toml.Decode(string(src), &doc)
	if err != nil {
		return nil, valueError(name, l, raw, err)
	}
	fail := func(field, format string, args ...any) error {
		return &Error{File: name, Line: l.line(field), Field: field, Msg: fmt.Sprintf(format, args...)}
	}
	if und := md.Undecoded(); len(und) > 0 {
		k := und[0].String()
		return nil, fail(k, "unknown key; the keys are described in docs/runtime-boundary.md#simulated-topology-file")
	}
	return build(name, &doc, abi, fail)
}

// The TOML library reports a value its field cannot hold either as a
// ParseError (out of range) or as "toml: line N (last key "k"): ..." (wrong
// type); both become file:line: field: message. Inside an array of tables
// the library's line is that of the key's last row, so the row is found
// again here (rowOf) and the line is that row's.
var typeErr = regexp.MustCompile(`^toml: (?:line (\d+) )?\(last key "([^"]*)"\): (.*)$`)

const valueFix = "; write a value of the type docs/runtime-boundary.md#simulated-topology-file gives for it"

func valueError(name string, l *locator, raw map[string]any, err error) error {
	var line int
	var key, msg string
	var pe toml.ParseError
	if errors.As(err, &pe) {
		line, key, msg = pe.Position.Line, pe.LastKey, pe.Message
	} else if m := typeErr.FindStringSubmatch(err.Error()); m != nil {
		line, _ = strconv.Atoi(m[1])
		key, msg = m[2], m[3]
	} else {
		return &Error{File: name, Msg: strings.ReplaceAll(err.Error(), "\n", " ")}
	}
	if table, rest, ok := strings.Cut(key, "."); ok {
		if i := rowOf(raw, table); i >= 0 {
			key = fmt.Sprintf("%s[%d].%s", table, i, rest)
			line = l.line(key)
		}
	}
	if line == 0 {
		line = l.line(key)
	}
	return &Error{File: name, Line: line, Field: key, Msg: msg + valueFix}
}

// rows are the arrays of tables of a topology file, by name.
var rows = map[string]func() any{
	"device": func() any { return new(fileDevice) },
	"mla":    func() any { return new(fileMLA) },
	"core":   func() any { return new(fileCore) },
}

// rowOf is the first row of array of tables `table` whose values do not
// decode into its row type, or -1.
func rowOf(raw map[string]any, table string) int {
	mk, ok := rows[table]
	if !ok {
		return -1
	}
	list, _ := raw[table].([]map[string]any)
	for i, row := range list {
		var buf bytes.Buffer
		if toml.NewEncoder(&buf).Encode(row) != nil {
			continue
		}
		if _, err := toml.Decode(buf.String(), mk()); err != nil {
			return i
		}
	}
	return -1
}

var familyName = regexp.MustCompile(`^[a-z][a-z0-9]*$`)

func build(name string, doc *fileDoc, abi ABI, fail func(field, format string, args ...any) error) (*Topology, error) {
	t := &Topology{file: name, abi: abi, deviceIdx: map[int]int{}, mlaIdx: map[int]int{}, ridIdx: map[int]int{}}

	in := doc.Instance
	if in == nil {
		return nil, fail("instance", "missing [instance] table; add one with at least family, family_id and vcore_size")
	}
	if !familyName.MatchString(in.Family) {
		return nil, fail("instance.family", "%q is not a family name; write it in lower case, e.g. \"trn2\"", in.Family)
	}
	if in.FamilyID == nil {
		return nil, fail("instance.family_id", "missing; give the number nrt_instance_info_t.family reports for %q", in.Family)
	}
	if in.VcoreSize == nil || *in.VcoreSize == 0 {
		return nil, fail("instance.vcore_size", "must be at least 1 (physical cores per virtual core)")
	}
	if len(in.PortRemap) > 0 {
		seen := make([]bool, len(in.PortRemap))
		for i, p := range in.PortRemap {
			if p < 0 || p >= len(in.PortRemap) || seen[p] {
				return nil, fail("instance.port_remap", "entry %d (%d) makes the list no permutation of 0..%d; list every port exactly once", i, p, len(in.PortRemap)-1)
			}
			seen[p] = true
		}
	}
	if abi.MaxArchName > 0 && len(in.Arch) >= abi.MaxArchName {
		return nil, fail("instance.arch_name", "%q is %d bytes; it must fit nrt_instance_info_t.arch_name (%d bytes with the NUL)", in.Arch, len(in.Arch), abi.MaxArchName)
	}
	if abi.MaxDeviceRevision > 0 && len(in.Revision) >= abi.MaxDeviceRevision {
		return nil, fail("instance.device_revision", "%q is %d bytes; it must fit nrt_instance_info_t.device_revision (%d bytes with the NUL)", in.Revision, len(in.Revision), abi.MaxDeviceRevision)
	}
	t.inst = Instance{Family: in.Family, FamilyID: *in.FamilyID, Size: in.Size, Arch: in.Arch, Revision: in.Revision}
	t.vcoreSize, t.vss, t.remap = *in.VcoreSize, in.VirtualServerSize, in.PortRemap
	switch in.VNCRegime {
	case "", RegimeDistributed:
		t.regime = RegimeDistributed
	case RegimeSingleVNC:
		t.regime = RegimeSingleVNC
	default:
		return nil, fail("instance.vnc_regime", "%q is not a regime; use %q (nrt_get_total_vnc_count reports 0 and libnccom bootstraps) or %q (it reports the core count and libnccom skips the bootstrap)", in.VNCRegime, RegimeDistributed, RegimeSingleVNC)
	}

	pod := doc.Pod
	if pod == nil {
		pod = &filePod{Type: "none"}
	}
	if _, ok := abi.PodTypes[pod.Type]; !ok || pod.Type == "invalid" {
		return nil, fail("pod.type", "%q is not a pod type; use one of none, p2p, switch", pod.Type)
	}
	switch {
	case pod.Type == "none" && pod.Node != 0:
		return nil, fail("pod.node", "must be 0 without a pod (type = \"none\")")
	case pod.Type != "none" && pod.Size == 0:
		return nil, fail("pod.size", "a %s pod needs size >= 1", pod.Type)
	case pod.Type != "none" && pod.Node >= pod.Size:
		return nil, fail("pod.node", "%d is not below the pod size %d", pod.Node, pod.Size)
	}
	t.podType, t.podSize, t.podNode, t.reservID = pod.Type, pod.Size, pod.Node, pod.ReservationID

	if len(doc.MLA) == 0 {
		return nil, fail("mla", "no [[mla]] rows; describe at least one MLA")
	}
	for i, m := range doc.MLA {
		f := func(k string) string { return fmt.Sprintf("mla[%d].%s", i, k) }
		switch {
		case m.ID == nil || *m.ID < 0:
			return nil, fail(f("id"), "missing or negative; give the MLA index")
		case m.RID == nil || *m.RID < 0:
			return nil, fail(f("rid"), "missing or negative; give the MLA's routing id")
		case m.HostDeviceID == nil || *m.HostDeviceID < 0:
			return nil, fail(f("host_device_id"), "missing or negative; give the MLA's host device id")
		}
		if j, dup := t.mlaIdx[*m.ID]; dup {
			return nil, fail(f("id"), "MLA %d is already described by mla[%d]; give each MLA one row", *m.ID, j)
		}
		if j, dup := t.ridIdx[*m.RID]; dup {
			return nil, fail(f("rid"), "routing id %d is already used by mla[%d]; routing ids are unique", *m.RID, j)
		}
		t.mlaIdx[*m.ID], t.ridIdx[*m.RID] = i, i
		t.mlas = append(t.mlas, mlaRow{id: *m.ID, rid: *m.RID, hostDeviceID: *m.HostDeviceID, available: m.Available == nil || *m.Available, peers: m.Peers})
	}
	for i, m := range doc.MLA {
		for p, peer := range m.Peers {
			if _, ok := t.mlaIdx[peer]; peer != -1 && !ok {
				return nil, fail(fmt.Sprintf("mla[%d].peers", i), "port %d names MLA %d, which has no [[mla]] row; use -1 for an unconnected port", p, peer)
			}
		}
	}

	if len(doc.Device) == 0 {
		return nil, fail("device", "no [[device]] rows; describe at least one device")
	}
	for i, d := range doc.Device {
		f := func(k string) string { return fmt.Sprintf("device[%d].%s", i, k) }
		if d.ID == nil || *d.ID < 0 {
			return nil, fail(f("id"), "missing or negative; give the device number")
		}
		if abi.MaxDevices > 0 && *d.ID >= abi.MaxDevices {
			return nil, fail(f("id"), "%d is not below NEC_MAX_DEVICES (%d)", *d.ID, abi.MaxDevices)
		}
		if j, dup := t.deviceIdx[*d.ID]; dup {
			return nil, fail(f("id"), "device %d is already described by device[%d]", *d.ID, j)
		}
		bdf, err := ParseBDF(d.BDF)
		if err != nil {
			return nil, fail(f("bdf"), "%v", err)
		}
		if d.MLA == nil {
			return nil, fail(f("mla"), "missing; name the device's MLA")
		}
		if _, ok := t.mlaIdx[*d.MLA]; !ok {
			return nil, fail(f("mla"), "MLA %d has no [[mla]] row", *d.MLA)
		}
		t.deviceIdx[*d.ID] = i
		t.devices = append(t.devices, deviceRow{id: *d.ID, bdf: bdf, mla: *d.MLA, available: d.Available == nil || *d.Available})
	}

	if len(doc.Core) == 0 {
		return nil, fail("core", "no [[core]] rows; describe at least one virtual core")
	}
	for i, c := range doc.Core {
		if c.Device == nil {
			return nil, fail(fmt.Sprintf("core[%d].device", i), "missing; name the core's device")
		}
		if _, ok := t.deviceIdx[*c.Device]; !ok {
			return nil, fail(fmt.Sprintf("core[%d].device", i), "device %d has no [[device]] row", *c.Device)
		}
		vtpb := uint32(noVtpb)
		if c.Vtpb != nil {
			vtpb = *c.Vtpb
		}
		t.cores = append(t.cores, coreRow{device: *c.Device, vtpb: vtpb})
	}
	return t, nil
}

// ParseBDF reads "dddd:bb:ss.f" (the domain may be left out).
func ParseBDF(s string) (BDF, error) {
	bad := fmt.Errorf("%q is not a PCI address; write it as dddd:bb:ss.f in hex, e.g. \"0000:10:1c.0\"", s)
	parts := strings.Split(s, ":")
	if len(parts) == 2 {
		parts = append([]string{"0"}, parts...)
	}
	if len(parts) != 3 {
		return BDF{}, bad
	}
	sf := strings.Split(parts[2], ".")
	if len(sf) != 2 {
		return BDF{}, bad
	}
	var v [4]uint64
	for i, p := range []struct {
		s   string
		max uint64
	}{{parts[0], 0xffff}, {parts[1], 0xff}, {sf[0], 0x1f}, {sf[1], 7}} {
		n, err := strconv.ParseUint(p.s, 16, 32)
		if err != nil || n > p.max || p.s == "" {
			return BDF{}, bad
		}
		v[i] = n
	}
	return BDF{Domain: uint32(v[0]), Bus: uint32(v[1]), Slot: uint8(v[2]), Func: uint8(v[3])}, nil
}

// locator finds the line of a field path such as "device[2].bdf",
// "instance.family" or "mla" in the source, so messages can point at it.
type locator struct{ src string }

var fieldPath = regexp.MustCompile(`^([a-z_]+)(?:\[(\d+)\])?(?:\.([a-z_]+))?`)

func (l *locator) line(field string) int {
	m := fieldPath.FindStringSubmatch(field)
	if m == nil {
		return 0
	}
	table, key := m[1], m[3]
	want := -1 // any row of an array of tables
	if m[2] != "" {
		want, _ = strconv.Atoi(m[2])
	}
	in, seen, header := false, -1, 0
	for i, raw := range strings.Split(l.src, "\n") {
		s := strings.TrimSpace(raw)
		if strings.HasPrefix(s, "[") {
			name := strings.TrimSpace(strings.Trim(strings.SplitN(s, "#", 2)[0], "[] \t"))
			in = false
			if name == table {
				seen++
				in = want < 0 || seen == want
				if in && header == 0 {
					header = i + 1
				}
			}
			continue
		}
		if in && key != "" {
			if k, _, ok := strings.Cut(s, "="); ok && strings.TrimSpace(k) == key {
				return i + 1
			}
		}
	}
	return header
}
