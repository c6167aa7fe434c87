package e2e

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"io"
	"os"
	"testing"

	"github.com/nrtabi/nrtabi/generated/abi"
	"github.com/nrtabi/nrtabi/internal/hostile"
	"github.com/nrtabi/nrtabi/runtime/transport/tcp"
)

// The reference libnccom's reading of what a ring neighbour sent before it
// went (nccom_frame_find_abort, nccom_frame_check: runtime/libnccom/frame.c)
// run in a C process per framing (abortframecheck.c, with ASan/UBSan when
// the compiler has them), so a fuzz target holds it to the wire of
// docs/bootstrap-hierarchy.md#abort-frames at pipe speed.
var abortDrivers = map[string]*cDriver{
	"default": {name: "abortframecheck", libnccom: []string{"frame.c", "socket.c", "log.c"},
		env: []string{"NRTABI_LOG_LEVEL=warn", "NRTABI_BOOTSTRAP_FRAMING=upstream"}, stderr: os.Stderr},
	"extended": {name: "abortframecheck", libnccom: []string{"frame.c", "socket.c", "log.c"},
		env: []string{"NRTABI_LOG_LEVEL=warn", "NRTABI_BOOTSTRAP_FRAMING=extended"}, stderr: os.Stderr},
}

// abortSkipMax is NCCOM_ABORT_SKIP_MAX (runtime/libnccom/nccom.h): the ring
// data passed over to find an abort.
const abortSkipMax = 64 << 20

// abortFrameMax bounds one record (the driver's RECORD_MAX).
const abortFrameMax = 64 << 10

// abortResult is one answer: rc (1 an abort, 0 a hang-up, -1 refused, and
// for nccom_frame_check 0 the data frame that was due, 2 no header), the
// abort's info and its text, or the refusal.
type abortResult struct {
	rc   int32
	info abi.BootstrapAbortInfo
	text string
}

func cAbortFrame(t testing.TB, framing string, check bool, want uint32, data []byte) abortResult {
	mode := uint32(0)
	if check {
		mode = 1
	}
	rec := binary.LittleEndian.AppendUint32(nil, mode)
	rec = binary.LittleEndian.AppendUint32(rec, want)
	rec = binary.LittleEndian.AppendUint32(rec, uint32(len(data)))
	var res abortResult
	abortDrivers[framing].call(t, append(rec, data...), func(r *bufio.Reader) error {
		var b [4 + abi.SizeofBootstrapAbortInfo + 4]byte
		if _, err := io.ReadFull(r, b[:]); err != nil {
			return err
		}
		res.rc = int32(binary.LittleEndian.Uint32(b[:]))
		res.info.UnmarshalFrom(b[4:])
		text := make([]byte, binary.LittleEndian.Uint32(b[4+abi.SizeofBootstrapAbortInfo:]))
		_, err := io.ReadFull(r, text)
		res.text = string(text)
		return err
	})
	return res
}

// refFindAbort is the contract of nccom_frame_find_abort: frames of ring
// data are passed over (at most abortSkipMax bytes), the first abort is
// read whole and checked as the Go side reads it (tcp.ReadAbortFrame, the
// extended ABORT's bound); a hang-up before one is 0, anything else -1.
func refFindAbort(framing string, data []byte) abortResult {
	r := bytes.NewReader(data)
	skipped := 0
	for {
		size, isAbort, ok, short := refHeader(framing, r)
		if short {
			return abortResult{rc: 0}
		}
		if isAbort {
			return refReadAbort(framing, r, size)
		}
		if !ok || size > abortSkipMax-skipped {
			return abortResult{rc: -1}
		}
		skipped += size
		if r.Len() < size {
			return abortResult{rc: 0}
		}
		_, _ = r.Seek(int64(size), io.SeekCurrent)
	}
}

// refHeader reads one frame header: its length, whether it opens an abort,
// whether it is ring data at all, or that the input ended first.
func refHeader(framing string, r *bytes.Reader) (size int, isAbort, ok, short bool) {
	if framing == "extended" {
		var h [abi.BootstrapMsgHeaderSize]byte
		if _, err := io.ReadFull(r, h[:]); err != nil {
			return 0, false, false, true
		}
		typ, n := binary.LittleEndian.Uint32(h[:]), binary.LittleEndian.Uint32(h[4:])
		return int(n), typ == abi.BootstrapMsgAbort, typ == abi.BootstrapMsgRingData, false
	}
	var h [4]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return 0, false, false, true
	}
	s := int32(binary.LittleEndian.Uint32(h[:]))
	return int(s), s == int32(abi.BootstrapFrameAbort), s >= 0, false
}

func refReadAbort(framing string, r *bytes.Reader, size int) abortResult {
	if framing == "extended" {
		if size > int(abi.BootstrapAbortTextMax) || r.Len() < size {
			return abortResult{rc: -1}
		}
		text := make([]byte, size)
		_, _ = io.ReadFull(r, text)
		return abortResult{rc: 1, info: abi.BootstrapAbortInfo{DeadRank: -1, Reporter: -1, Step: -1}, text: string(text)}
	}
	ra, err := tcp.ReadAbortFrame(r, "the fuzz input")
	if err != nil {
		return abortResult{rc: -1}
	}
	return abortResult{rc: 1, info: ra.Info, text: ra.Text}
}

// refFrameCheck is nccom_frame_check's contract for a frame of want bytes
// due: the data frame is 0, an abort as above, anything else -1.
func refFrameCheck(framing string, want uint32, data []byte) abortResult {
	r := bytes.NewReader(data)
	size, isAbort, ok, short := refHeader(framing, r)
	switch {
	case short:
		return abortResult{rc: 2}
	case ok && size == int(want):
		return abortResult{rc: 0}
	case isAbort:
		return refReadAbort(framing, r, size)
	}
	return abortResult{rc: -1}
}

func sameAbort(t *testing.T, what string, data []byte, got, want abortResult) {
	t.Helper()
	if got.rc != want.rc {
		t.Fatalf("%s of %q: rc %d (%q), want %d", what, data, got.rc, got.text, want.rc)
	}
	switch got.rc {
	case 1:
		if got.info != want.info || got.text != want.text {
			t.Fatalf("%s of %q: abort %+v %q, want %+v %q", what, data, got.info, got.text, want.info, want.text)
		}
	case -1:
		// The refusal is libnccom's own words, with numbers only.
		if got.text == "" {
			t.Fatalf("%s of %q: refused without a reason", what, data)
		}
		if i, bad := hostile.RawControl(got.text); bad {
			t.Fatalf("%s of %q: the reason %q holds a control byte at %d", what, data, got.text, i)
		}
	}
}

// abortSeeds are good and bad frames of both framings.
func abortSeeds() [][]byte {
	info := abi.BootstrapAbortInfo{Sanity: abi.BootstrapSanity, DeadRank: 3, Reporter: 4, Phase: abi.BootstrapPhaseFlatRing, Step: 1, TextLen: 5}
	ib := make([]byte, abi.SizeofBootstrapAbortInfo)
	info.MarshalTo(ib)
	def := append(append(binary.LittleEndian.AppendUint32(nil, 0xffffffff), ib...), "went!"...)
	data := append(binary.LittleEndian.AppendUint32(nil, 4), "abcd"...)
	ext := binary.LittleEndian.AppendUint32(binary.LittleEndian.AppendUint32(nil, abi.BootstrapMsgAbort), 4)
	extData := binary.LittleEndian.AppendUint32(binary.LittleEndian.AppendUint32(nil, abi.BootstrapMsgRingData), 2)
	return [][]byte{
		def, append(append([]byte(nil), data...), def...), def[:30], append(def[:56:56], "evil\x1b"...),
		append(extData, "xy"...), append(append(append([]byte(nil), extData...), "xy"...), append(ext, "dead"...)...),
		append(ext, "de"...), binary.LittleEndian.AppendUint32(nil, 0x7fffffff), binary.LittleEndian.AppendUint32(nil, 0xfffffffe), {},
	}
}

// FuzzCAbortFrame holds libnccom's abort reader to the wire, in both
// framings and both of its entries: the abort read whole and exactly as
// the Go side reads it, data passed over within its bound, a cut or a
// stranger refused with a reason, and no memory error under ASan/UBSan.
// Cost: two small C builds, then pipe speed.
func FuzzCAbortFrame(f *testing.F) {
	// Built before the inputs run: a first input that waited for two
	// sanitizer builds would pass the fuzzer's bound for a hung worker.
	for _, d := range abortDrivers {
		d.start(f)
	}
	for _, s := range abortSeeds() {
		f.Add(s, uint16(4), false)
		f.Add(s, uint16(2), true)
	}
	f.Fuzz(func(t *testing.T, data []byte, want uint16, check bool) {
		if len(data) > abortFrameMax {
			data = data[:abortFrameMax]
		}
		for _, framing := range []string{"default", "extended"} {
			got := cAbortFrame(t, framing, check, uint32(want), data)
			if check {
				sameAbort(t, framing+" nccom_frame_check", data, got, refFrameCheck(framing, uint32(want), data))
			} else {
				sameAbort(t, framing+" nccom_frame_find_abort", data, got, refFindAbort(framing, data))
			}
		}
	})
}

// TestCAbortFrameOverLong: a planted fault, a text one byte over the
// bound, is refused on both sides; a text at the bound comes back whole and
// as sent (escaping is the job of whoever shows it,
// docs/bootstrap-hierarchy.md#abort-frames).
func TestCAbortFrameOverLong(t *testing.T) {
	info := abi.BootstrapAbortInfo{Sanity: abi.BootstrapSanity, DeadRank: 1, Reporter: 2, Step: -1, TextLen: abi.BootstrapAbortTextMax + 1}
	ib := make([]byte, abi.SizeofBootstrapAbortInfo)
	info.MarshalTo(ib)
	frame := append(append(binary.LittleEndian.AppendUint32(nil, 0xffffffff), ib...), bytes.Repeat([]byte{'x'}, int(info.TextLen))...)
	got := cAbortFrame(t, "default", false, 0, frame)
	if got.rc != -1 || refFindAbort("default", frame).rc != -1 {
		t.Fatalf("an abort of %d bytes of text: C rc %d (%q), Go's reading %d; want both refused", info.TextLen, got.rc, got.text, refFindAbort("default", frame).rc)
	}
	t.Logf("refused: %s", got.text)
	info.TextLen = abi.BootstrapAbortTextMax
	info.MarshalTo(ib)
	frame = append(append(binary.LittleEndian.AppendUint32(nil, 0xffffffff), ib...), bytes.Repeat([]byte{'\x1b'}, int(info.TextLen))...)
	if got := cAbortFrame(t, "default", false, 0, frame); got.rc != 1 || got.text != string(frame[56:]) {
		t.Fatalf("an abort of %d bytes of text: rc %d, %d bytes; want it whole", info.TextLen, got.rc, len(got.text))
	}
}
