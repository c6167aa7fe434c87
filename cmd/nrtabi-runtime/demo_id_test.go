package main

import (
	"strings"
	"testing"

	"github.com/nrtabi/nrtabi/runtime/transport/tcp"
)

// TestAgreedID: the demo's last step reads the unique id a rank reports,
// a split id by default or a root's ip:port, and refuses anything else.
func TestAgreedID(t *testing.T) {
	split := tcp.SplitID{WorldSize: 4, RankN: 4, Cluster: 0x56183807a26ffaa8, Epoch: 1796285206, Serial: 2}
	for _, c := range []struct {
		in, want string
	}{
		{split.String(), "is a split id"},
		{"127.0.0.1:35717", "starts with the root's sockaddr_in (28 of 128 bytes): 02008b857f000001"},
	} {
		got, err := agreedID(c.in)
		if err != nil || !strings.Contains(got, c.want) {
			t.Errorf("agreedID(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
	for _, bad := range []string{"", "-", "split(cluster=0x1,epoch=1,n=4,root=9,serial=2)", "split(cluster=0x1,epoch=1,n=4,root=0,serial=0)",
		split.String() + "x", "split(cluster=1,epoch=1,n=4,root=0,serial=2)", "\x1b[2J"} {
		if got, err := agreedID(bad); err == nil || strings.ContainsRune(err.Error(), 0x1b) {
			t.Errorf("agreedID(%q) = %q, %v; want a refusal, escaped", bad, got, err)
		}
	}
}
