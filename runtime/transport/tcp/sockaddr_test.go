package tcp

import (
	"encoding/hex"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nrtabi/nrtabi/generated/abi"
	"github.com/nrtabi/nrtabi/internal/cc"
)

// cSockaddrs prints the bytes C lays out for 10.1.2.3:4660 in a
// sockaddr_in and for [fd00::1:2]:4660 in a sockaddr_in6, each in a
// zeroed buffer the size of the union.
const cSockaddrs = `#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
union sa { struct sockaddr sa; struct sockaddr_in sin; struct sockaddr_in6 sin6; };
_Static_assert(sizeof(union sa) == 28, "the socket address union is 28 bytes");
static void dump(const union sa *u) {
	const unsigned char *b = (const unsigned char *)u;
	for (size_t i = 0; i < sizeof *u; i++) printf("%02x", b[i]);
	printf("\n");
}
int main(void) {
	union sa u;
	memset(&u, 0, sizeof u);
	u.sin.sin_family = AF_INET;
	u.sin.sin_port = htons(4660);
	inet_pton(AF_INET, "10.1.2.3", &u.sin.sin_addr);
	dump(&u);
	memset(&u, 0, sizeof u);
	u.sin6.sin6_family = AF_INET6;
	u.sin6.sin6_port = htons(4660);
	inet_pton(AF_INET6, "fd00::1:2", &u.sin6.sin6_addr);
	dump(&u);
	return 0;
}
`

func TestUniqueIDHasTheCSockaddrLayout(t *testing.T) {
	if err := cc.Available(); err != nil {
		t.Skipf("no C compiler to lay out the reference sockaddrs: %v", err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "sa.c"), []byte(cSockaddrs), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := cc.Run(dir, "-std=c11", "-D_DEFAULT_SOURCE", "-o", "sa", "sa.c"); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(filepath.Join(dir, "sa")).Output()
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Fields(string(out))
	for i, ap := range []netip.AddrPort{netip.MustParseAddrPort("10.1.2.3:4660"), netip.MustParseAddrPort("[fd00::1:2]:4660")} {
		id := NewUniqueID(ap)
		if got := hex.EncodeToString(id[:abi.NcclSocketAddressSize]); got != lines[i] {
			t.Errorf("%s: unique id starts %s, C lays it out %s", ap, got, lines[i])
		}
		for _, b := range id[abi.NcclSocketAddressSize:] {
			if b != 0 {
				t.Fatalf("%s: bytes after the socket address are not zero: %x", ap, id)
			}
		}
		back, err := RootAddr(&id)
		if err != nil || back != ap {
			t.Errorf("%s: RootAddr gives %s, %v", ap, back, err)
		}
	}
}

func TestRootAddrRefusesEmptyAndForeignIDs(t *testing.T) {
	var id UniqueID
	if _, err := RootAddr(&id); err == nil || !strings.Contains(err.Error(), "no root address") {
		t.Errorf("an all-zero id: %v", err)
	}
	id[0] = 7 // family 7
	if _, err := RootAddr(&id); err == nil || !strings.Contains(err.Error(), "neither AF_INET") {
		t.Errorf("family 7: %v", err)
	}
	id = NewUniqueID(netip.MustParseAddrPort("10.0.0.1:0"))
	if _, err := RootAddr(&id); err == nil || !strings.Contains(err.Error(), "without a port") {
		t.Errorf("port 0: %v", err)
	}
}
