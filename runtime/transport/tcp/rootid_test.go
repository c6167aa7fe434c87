package tcp

import (
	"errors"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/nrtabi/nrtabi/generated/abi"
	"github.com/nrtabi/nrtabi/internal/cfmt"
)

func TestParseRootID(t *testing.T) {
	for in, want := range map[string]string{
		"10.1.2.3:5000":        "10.1.2.3:5000",
		"[fd00::7]:62182":      "[fd00::7]:62182",
		"[::1]:1":              "[::1]:1",
		"localhost:6000":       "127.0.0.1:6000",
		"127.0.0.1:65535":      "127.0.0.1:65535",
		"[::ffff:1.2.3.4]:700": "[::ffff:1.2.3.4]:700",
	} {
		got, err := ParseRootID(t.Context(), in, time.Second)
		if err != nil {
			t.Errorf("%s: %v", in, err)
			continue
		}
		if in == "localhost:6000" && got.Addr().IsLoopback() && got.Port() == 6000 {
			continue // localhost may resolve to ::1 first
		}
		if got != netip.MustParseAddrPort(want) {
			t.Errorf("%s: %s, want %s", in, got, want)
		}
	}
}

func TestParseRootIDErrorIsLibnccomsText(t *testing.T) {
	for in, cause := range map[string]string{
		"":                          "no :<port>",
		"10.1.2.3":                  "no :<port>",
		"10.1.2.3:":                 "not a number",
		"10.1.2.3:0":                "not a number in 1..65535",
		"10.1.2.3:70000":            "not a number in 1..65535",
		":5000":                     "no host",
		"fd00::1:5000":              "brackets",
		"[fd00::1]5000":             "[<ipv6>]:<port>",
		"[10.0.0.1]:5000":           "not an IPv6 address",
		"bad_host!:5000":            "neither an IPv4 address nor a hostname",
		"no-such-host.invalid:5000": "cannot resolve",
	} {
		_, err := ParseRootID(t.Context(), in, time.Second)
		var ce *CommIDError
		if !errors.As(err, &ce) {
			t.Errorf("%q: %v, want a CommIDError", in, err)
			continue
		}
		if want := cfmt.Sprintf(abi.MsgNccomInvalidCommID, in); err.Error() != want {
			t.Errorf("%q: %q, want libnccom's %q", in, err, want)
		}
		if !strings.Contains(ce.Cause.Error(), cause) {
			t.Errorf("%q: cause %q lacks %q", in, ce.Cause, cause)
		}
	}
}
