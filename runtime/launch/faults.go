//go:build nrtabi_faults

package launch

import (
	"encoding/binary"
	"fmt"
	"net"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"syscall"
	"unsafe"

	"github.com/nrtabi/nrtabi/generated/abi"
	"github.com/nrtabi/nrtabi/runtime/transport/tcp"
)

// FaultHooks reports whether this build carries the test-only fault hooks.
const FaultHooks = true

// faultHooks turns NRTABI_BOOTSTRAP_FAULT into the misbehaviour of one rank.
// Only binaries built with -tags nrtabi_faults (the bootstrap tests' build)
// carry them.
func faultHooks(kind string) (*tcp.Hooks, error) {
	die := func() {
		_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
		select {}
	}
	short := func(frame []byte) []byte { return frame[:len(frame)-abi.SizeofNcclNRTGitHash] }
	if rest, ok := strings.CutPrefix(kind, "die-at-step-"); ok {
		// Killed before step N of the flat ring's peer-record all-gather
		// (its second): on a one-way ring of N+2 ranks, its last step, so
		// every rank but its successor completes the gather first
		// (docs/bootstrap-hierarchy.md#abort-frames).
		step, err := strconv.Atoi(rest)
		if err != nil || step < 0 {
			return nil, fmt.Errorf("%s=%q: die-at-step-N takes a step number N >= 0", EnvFault, kind)
		}
		seen := 0
		return &tcp.Hooks{RingStep: func(phase uint32, s int, _ netip.AddrPort) bool {
			if phase == abi.BootstrapPhaseFlatRing && s == 0 {
				seen++
			}
			if phase == abi.BootstrapPhaseFlatRing && s == step && seen == 2 {
				die()
			}
			return false
		}}, nil
	}
	switch kind {
	case "":
		return nil, nil
	case "bad-magic":
		return &tcp.Hooks{WriteRecord: func(c net.Conn, frame []byte, payload int) error {
			binary.LittleEndian.PutUint32(frame[payload:], ^abi.BootstrapSanity)
			_, err := c.Write(frame)
			return err
		}}, nil
	case "truncated-record":
		return &tcp.Hooks{WriteRecord: func(c net.Conn, frame []byte, _ int) error {
			_, _ = c.Write(short(frame))
			c.Close()
			return fmt.Errorf("fault injected (%s=%s): sent %d of the %d bytes of the INFO_TO_ROOT frame", EnvFault, kind, len(short(frame)), len(frame))
		}}, nil
	case "die-mid-record":
		return &tcp.Hooks{WriteRecord: func(c net.Conn, frame []byte, _ int) error {
			_, _ = c.Write(short(frame))
			die()
			return nil
		}}, nil
	case "die-after-record":
		return &tcp.Hooks{WriteRecord: func(c net.Conn, frame []byte, _ int) error {
			_, _ = c.Write(frame)
			die()
			return nil
		}}, nil
	case "die-after-reply":
		return &tcp.Hooks{AfterReply: die}, nil
	case "die-after-p2p-send":
		// Killed just after its gather, once its first point-to-point
		// message is out (libnccom's hook of the same name): the kill
		// tests' dead Go rank in a mixed world.
		return &tcp.Hooks{AfterPeerSend: die}, nil
	case "die-mid-gather":
		// A hierarchical world: killed as the rank enters the leaders'
		// phase of its first all-gather — a leader with its instance block
		// owed to the next leader, a non-leader with the down pass owed to
		// its successor (docs/bootstrap-hierarchy.md).
		return &tcp.Hooks{GatherPhase: func(phase string) {
			if phase == "inter" {
				die()
			}
		}}, nil
	case "stall-mid-gather":
		// As die-mid-gather, but the rank stops there alive, its sockets
		// open, until something outside kills it (the tests' kill of a
		// rank process mid-gather).
		return &tcp.Hooks{GatherPhase: func(phase string) {
			if phase == "inter" {
				select {}
			}
		}}, nil
	case "stall-before-root":
		return nil, nil // stallBeforeRoot
	case "deaf-after-gather":
		// A rank that leaves its ring links unwatched once its gather is
		// done: it hears of a later death only at its next phase's timeout
		// (the planted fault of the kill tests' 2 s bound).
		return &tcp.Hooks{Deaf: true}, nil
	case "forge-relay":
		// A relay that passes on forged copies: every record after the
		// first of each block it sends replaced by the first (another
		// rank's genuine record), as internal/hostile.ForgeRelay does for
		// the in-process tests; the next rank must name this one.
		return &tcp.Hooks{Relay: func(out []byte, rec int) []byte {
			if rec != abi.SizeofNcclPeerInfo {
				return out // the listen addresses' all-gather: passed on as is
			}
			forged := append([]byte(nil), out...)
			for i := rec; i+rec <= len(forged); i += rec {
				copy(forged[i:i+rec], out[:rec])
			}
			return forged
		}}, nil
	case "wrong-instance":
		// A hierarchical record claiming the next instance (extInfoHier.instance).
		return &tcp.Hooks{WriteRecord: func(c net.Conn, frame []byte, payload int) error {
			if len(frame)-payload == abi.SizeofExtInfoHier {
				at := frame[payload+int(unsafe.Offsetof(abi.ExtInfoHier{}.Instance)):]
				binary.LittleEndian.PutUint32(at, binary.LittleEndian.Uint32(at)+1)
			}
			_, err := c.Write(frame)
			return err
		}}, nil
	}
	return nil, fmt.Errorf("%s=%q: use bad-magic, truncated-record, die-mid-record, die-after-record, die-after-reply, die-after-p2p-send, die-mid-gather, stall-mid-gather, stall-before-root, deaf-after-gather, die-at-step-N, forge-relay or wrong-instance", EnvFault, kind)
}

// stallBeforeRoot is the fault of a rank that stops before it opens any
// connection, alive until killed: no peer can see it go, so only the
// launcher can (docs/nrtabi-runtime-bootstrap.md#when-a-rank-fails).
func stallBeforeRoot(kind string) bool { return kind == "stall-before-root" }
