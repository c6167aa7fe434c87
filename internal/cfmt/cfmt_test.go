package cfmt

import (
	"testing"

	"github.com/nrtabi/nrtabi/generated/abi"
)

func TestSprintf(t *testing.T) {
	for _, tc := range []struct {
		format string
		args   []any
		want   string
	}{
		{abi.MsgGcommNoCore, []any{uint32(7)}, "Failed to find core 7"},
		{abi.MsgGcommNoCore, []any{int32(-1)}, "Failed to find core 4294967295"},
		{abi.MsgGcommInvalidPodNode, []any{uint32(5), uint32(8), int32(2)}, "Invalid pod_node_id: 5 (pod_size: 8) pod_type:2"},
		{abi.MsgSigValidationFailed, []any{uint32(3)}, "[gid: 3] failed signature validation: ... mismatched collectives between the peers"},
		{abi.MsgNcclIncompatible, []any{uint64(90)}, "Incompatible version of aws-neuronx-collectives.  Compatibility id: 90, expected: 89"},
		{abi.MsgNcclUsingCcom, []any{uint64(2), uint64(31), uint64(24), uint64(0), "abc"}, "Using CCOM 2.31.24.0-abc"},
		{"%d of %u", []any{uint32(0xffffffff), -2}, "-1 of 4294967294"},
		{"%lu and %ld", []any{-1, uint64(1 << 40)}, "18446744073709551615 and 1099511627776"},
		{"%5d|%-4s|%%|%02x", []any{42, "ab", 10}, "   42|ab  |%|0a"},
		{"%p", []any{uintptr(0x1000)}, "0x1000"},
		{"%s %d", []any{"x"}, "x %!d(MISSING)"},
		{"trailing %", nil, "trailing %"},
		{"%c%c", []any{65, 'b'}, "Ab"},
	} {
		if got := Sprintf(tc.format, tc.args...); got != tc.want {
			t.Errorf("Sprintf(%q, %v) = %q, want %q", tc.format, tc.args, got, tc.want)
		}
	}
}
