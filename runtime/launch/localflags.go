package launch

import (
	"fmt"

	"github.com/nrtabi/nrtabi/generated/abi"
	"github.com/nrtabi/nrtabi/runtime/transport/tcp"
)

// CheckLocalFlags refuses the --local knobs that would be ignored: a knob
// without --local, a rank outside the world, --fault-rank on a build
// without fault hooks or with no fault named, a fault named for no rank
// (docs/nrtabi-runtime-bootstrap.md#options). set holds the flags given.
func CheckLocalFlags(o *Options, set map[string]bool, getenv func(string) string) error {
	knobs := []struct {
		flag string
		rank int
	}{{"reorder-rank", o.ReorderRank}, {"skew-rank", o.SkewRank}, {"fault-rank", o.FaultRank}, {"misplace-rank", o.MisplaceRank}}
	if o.Local == 0 {
		for _, k := range knobs {
			if set[k.flag] {
				return fmt.Errorf("--%s is a --local flag: it picks one of the ranks the launcher spawns", k.flag)
			}
		}
		return nil
	}
	for _, f := range []string{"rank", "nranks", "launcher", "root"} {
		if set[f] {
			return fmt.Errorf("--%s with --local: the --local launcher numbers its ranks and roots them on loopback itself", f)
		}
	}
	for _, k := range knobs {
		if set[k.flag] && (k.rank < 0 || (o.Local > 0 && k.rank >= o.Local)) {
			return fmt.Errorf("--%s %d: the world of --local %d has ranks 0..%d", k.flag, k.rank, o.Local, o.Local-1)
		}
	}
	switch {
	case set["fault-rank"] && !FaultHooks:
		return fmt.Errorf("--fault-rank %d: this binary has no fault hooks (they are test-only): build it with -tags nrtabi_faults", o.FaultRank)
	case set["fault-rank"] && o.Fault == "":
		return fmt.Errorf("--fault-rank %d: %s is not set: name the fault to plant (docs/nrtabi-runtime-bootstrap.md#environment)", o.FaultRank, EnvFault)
	case o.Fault != "" && !set["fault-rank"]:
		return fmt.Errorf("%s=%s with --local: give --fault-rank R, the rank to plant it in", EnvFault, envq(o.Fault))
	}
	if o.Fault != "" {
		if _, err := faultHooks(o.Fault); err != nil {
			return err
		}
	}
	if set["misplace-rank"] {
		env, err := tcp.ParsePerInstance(abi.EnvBootstrapPerInstance, getenv(abi.EnvBootstrapPerInstance))
		if err != nil {
			return err
		}
		l, err := o.perInstance(env)
		if err != nil {
			return err
		}
		if !tcp.Hierarchical(true, o.Local, l) {
			return fmt.Errorf("--misplace-rank %d: the world of %d ranks is flat (ranks per instance %d): give --per-instance L below %d", o.MisplaceRank, o.Local, l, o.Local)
		}
	}
	return nil
}
