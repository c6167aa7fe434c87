// Package worldprog is what one rank of a bootstrap world runs after its
// flat bootstrap, shared by the Go ranks (`nrtabi-runtime bootstrap`) and the C hosts
// driving libnrt (runtime/libnrt's nrtabi_bootstrap_world): the program of
// one send/recv replica group spanning the world (or its reordering, which
// every rank must refuse), and the one line each rank reports, so the two
// kinds of rank can be compared field by field in one mixed world.
package worldprog

import (
	"bufio"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/nrtabi/nrtabi/generated/abi"
	"github.com/nrtabi/nrtabi/runtime/collectives"
)

// Ops is one rank's op queue for replica group 1; reordered swaps two ops,
// which changes the group's signature.
func Ops(reordered bool) []collectives.Op {
	ops := []collectives.Op{
		{Kind: abi.EncAllReduce, SizeN: 4 << 20, AlgWord: 1, GroupID: 1},
		{Kind: abi.EncReduceScatter, SizeN: 2 << 20, AlgWord: 1, GroupID: 1},
		{Kind: abi.EncAllGather, SizeN: 1 << 20, AlgWord: 2, GroupID: 1},
	}
	if reordered {
		ops[1], ops[2] = ops[2], ops[1]
	}
	return ops
}

// Context is rank's program: one send/recv replica group spanning a world
// of nranks, posting Ops(reordered).
func Context(rank, nranks int, reordered bool) *collectives.Context {
	parts := make([]uint32, nranks)
	for i := range parts {
		parts[i] = uint32(i)
	}
	ops := Ops(reordered)
	return &collectives.Context{
		CCOpOwner: true, // the rank's driver context owns its collective ops
		ReplicaGroups: []collectives.ReplicaGroup{{Rank: abi.EncRgSendrecvRank, RankN: nranks, GroupID: GroupID, SrcTargetPairsID: -1,
			Participants: parts, BootstrapParticipants: parts, BootstrapRank: rank, NumOps: uint32(len(ops))}},
		Ops: ops,
	}
}

// GroupID is the world group's replica group (and comm) id; Stream is the
// stream its comm runs on.
const GroupID, Stream = 1, 1

// InitGroupComm is enc_init_comm's share for c's replica group
// (docs/sources.md#s004-5): the op compiler's enc_context maps comm GroupID
// to Stream, and nccl_init_comm (collectives.NcclInitComm) bootstraps the
// group's comm node and binds the enc_comm. It returns the node and the
// binding read back from the C enc_comm as "id/stream" (Report.Bound).
func InitGroupComm(rt *collectives.Runtime, c *collectives.Context, dev, ctx int) (*collectives.CommNode, string, error) {
	objs, err := collectives.NewCompileObjects()
	if err != nil {
		return nil, "", err
	}
	defer objs.Free()
	objs.Context.StreamIDMap[GroupID] = Stream
	node, err := rt.NcclInitComm(objs.Context, objs.Comm, GroupID, &c.ReplicaGroups[0], dev, ctx, false)
	if err != nil {
		return nil, "", err
	}
	id, stream := collectives.CommBinding(objs.Comm)
	return node, fmt.Sprintf("%d/%d", id, stream), nil
}

// Report is what one rank prints: one line of key=value pairs.
type Report struct {
	Rank, NRanks, Prev, Next int // Prev < 0: no world (single vNC or failed early)
	Cluster                  uint64
	// PerInstance is L on a hierarchical world (Prev/Next are then the
	// intra-instance ring's); Table a digest of the gathered peer-record
	// table, the same on every rank of an agreeing world. Zero/"": not shown.
	PerInstance int
	Table       string
	// Bound is the world group's enc_comm {id, stream_id} as nccl_init_comm
	// left it ("1/1"); "": not shown.
	Bound                 string
	UID                   string
	Err                   error
	TStart, TBoot, TAgree time.Time
	TDone                 time.Time
	// UStart .. UDone are the process's Usage at those stamps (timing
	// only; zero: not shown).
	UStart, UBoot, UAgree, UDone Usage
}

// NewReport is the report of rank before anything happened.
func NewReport(rank, nranks int) *Report {
	return &Report{Rank: rank, NRanks: nranks, Prev: -1, Next: -1}
}

// Line formats the report; timing adds the phase timestamps (bench/).
func (r *Report) Line(timing bool) string {
	s := fmt.Sprintf("rank=%d nranks=%d", r.Rank, r.NRanks)
	if r.Prev >= 0 {
		s += fmt.Sprintf(" prev=%d next=%d cluster_id=%#016x", r.Prev, r.Next, r.Cluster)
	} else {
		s += " prev=- next=- cluster_id=-"
	}
	if r.PerInstance > 0 {
		s += fmt.Sprintf(" per_instance=%d", r.PerInstance)
	}
	if r.Table != "" {
		s += " table=" + r.Table
	}
	if r.Bound != "" {
		s += " bound=" + r.Bound
	}
	uid := r.UID
	if uid == "" {
		uid = "-"
	}
	s += " unique_id=" + uid
	if r.Err == nil {
		s += " verdict=ok"
	} else {
		s += " verdict=failed error=" + strconv.Quote(r.Err.Error())
	}
	if timing {
		ns := func(t time.Time) int64 {
			if t.IsZero() {
				return 0
			}
			return t.UnixNano()
		}
		s += fmt.Sprintf(" t_start=%d t_boot=%d t_agree=%d t_done=%d", ns(r.TStart), ns(r.TBoot), ns(r.TAgree), ns(r.TDone))
		if r.UStart != (Usage{}) && r.UDone != (Usage{}) {
			s += " u_start=" + r.UStart.text() + " u_boot=" + r.UBoot.text() + " u_agree=" + r.UAgree.text() + " u_done=" + r.UDone.text()
		}
	}
	return s
}

// IsReportLine says whether line is a rank's report line (Report.Line):
// the line of its output ParseLine reads and a launcher waits for.
func IsReportLine(line string) bool { return strings.HasPrefix(line, "rank=") }

// ParseLine reads the key=value line a rank prints (Report.Line) out of
// its output; "line" holds the line whole.
func ParseLine(out string) map[string]string {
	f := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		line := sc.Text()
		if !IsReportLine(line) {
			continue
		}
		f["line"] = line
		for rest := line; rest != ""; {
			rest = strings.TrimLeft(rest, " ")
			eq := strings.IndexByte(rest, '=')
			if eq < 0 {
				break
			}
			k, v := rest[:eq], rest[eq+1:]
			if strings.HasPrefix(v, `"`) {
				q, err := strconv.QuotedPrefix(v)
				if err != nil {
					break
				}
				f[k], _ = strconv.Unquote(q)
				rest = v[len(q):]
				continue
			}
			end := strings.IndexByte(v, ' ')
			if end < 0 {
				end = len(v)
			}
			f[k], rest = v[:end], v[end:]
		}
	}
	return f
}
