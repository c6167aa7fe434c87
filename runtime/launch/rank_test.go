package launch

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/nrtabi/nrtabi/runtime/worldprog"
)

func TestResolveRank(t *testing.T) {
	env := func(kv ...string) func(string) string {
		m := map[string]string{}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return func(k string) string { return m[k] }
	}
	for _, c := range []struct {
		flags      map[string]bool
		rank, size int
		getenv     func(string) string
		want       [2]int
		err        string
	}{
		{nil, -1, 0, env("RANK", "2", "WORLD_SIZE", "4"), [2]int{2, 4}, ""},
		{nil, -1, 0, env("OMPI_COMM_WORLD_RANK", "1", "OMPI_COMM_WORLD_SIZE", "2"), [2]int{1, 2}, ""},
		{nil, -1, 0, env("SLURM_PROCID", "0", "SLURM_NTASKS", "8", "SLURM_STEP_NUM_TASKS", "8"), [2]int{0, 8}, ""},
		// Two launchers that disagree, one flag that contradicts the launcher.
		{nil, -1, 0, env("RANK", "1", "WORLD_SIZE", "2", "SLURM_PROCID", "5", "SLURM_NTASKS", "8", "SLURM_STEP_NUM_TASKS", "8"), [2]int{}, "disagree on this process's place"},
		{map[string]bool{"rank": true}, 3, 0, env("RANK", "1", "WORLD_SIZE", "4"), [2]int{}, "--rank 3 but torchrun says rank 1"},
		{map[string]bool{"nranks": true}, 0, 4, env("RANK", "1", "WORLD_SIZE", "4"), [2]int{1, 4}, ""},
		{map[string]bool{"rank": true, "nranks": true}, 0, 1, env("RANK", "x"), [2]int{0, 1}, ""},
		{nil, -1, 0, env("RANK", "x", "WORLD_SIZE", "2"), [2]int{}, `RANK="x": not a whole number`},
		{nil, -1, 0, env(), [2]int{}, "no rank and world size"},
		{nil, -1, 0, env("SLURM_PROCID", "8", "SLURM_NTASKS", "8", "SLURM_STEP_NUM_TASKS", "8"), [2]int{}, "SLURM_PROCID=8 is not below SLURM_NTASKS=8"},
		// Bounded before anything is allocated per rank (1e8 ran out of memory).
		{nil, -1, 0, env("RANK", "0", "WORLD_SIZE", "100000000"), [2]int{}, `WORLD_SIZE="100000000": not a whole number in 0..65536`},
		{nil, -1, 0, env("RANK", "0", "WORLD_SIZE", "65537"), [2]int{}, `WORLD_SIZE="65537": not a whole number in 0..65536`},
		{map[string]bool{"rank": true, "nranks": true}, 8, 8, env(), [2]int{}, "Invalid rank requested : 8/8"},
		{map[string]bool{"rank": true, "nranks": true}, 0, 65537, env(), [2]int{}, "1..65536 ranks"},
	} {
		o := Options{Rank: c.rank, NRanks: c.size}
		err := o.ResolveRank(c.flags, c.getenv)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%+v: %v, want %q", c, err, c.err)
			}
			continue
		}
		if err != nil || [2]int{o.Rank, o.NRanks} != c.want {
			t.Errorf("%+v: %d/%d %v", c, o.Rank, o.NRanks, err)
		}
	}
}

// A rank refuses a log level it does not know, by the variable's name,
// before it does anything else; warn silences its info lines.
func TestRunRankLogLevel(t *testing.T) {
	t.Setenv("NRTABI_LOG_LEVEL", "loud")
	var out, errw bytes.Buffer
	err := RunRank(t.Context(), Options{Rank: 0, NRanks: 1, RootID: "127.0.0.1:1"}, &out, &errw)
	var ue *UsageError
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), "NRTABI_LOG_LEVEL=loud") || out.Len() != 0 {
		t.Fatalf("got %v, stdout %q", err, out.String())
	}
	t.Setenv("NRTABI_LOG_LEVEL", "warn")
	out.Reset()
	root, err := worldprog.FreeLoopbackRoot()
	if err != nil {
		t.Fatal(err)
	}
	if err := RunRank(t.Context(), Options{Rank: 0, NRanks: 1, RootID: root}, &out, &errw); err != nil {
		t.Fatalf("%v\n%s", err, errw.String())
	}
	if errw.Len() != 0 || !strings.Contains(out.String(), "verdict=ok") {
		t.Errorf("at warn: stderr %q, stdout %q", errw.String(), out.String())
	}
}
