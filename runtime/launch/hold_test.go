package launch

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// With --timing no rank ends before the last rank has reported: each rank
// here is a shell that takes the launcher's start line, reports (rank 1
// 0.4 s after rank 0), then waits for its stdin to close, and writes down
// when it reported and when it ended. The plant, an end hold released with
// the start, lets rank 0 end before rank 1 reports.
func TestLocalHoldsUntilEveryReport(t *testing.T) {
	for _, plant := range []bool{false, true} {
		dir := t.TempDir()
		script := `r=$2; echo ready; read line; [ "$line" = go ] || exit 3
if [ "$r" = 1 ]; then sleep 0.4; fi
date +%s%N > "` + dir + `/report.$r"; echo "rank=$r nranks=2"
cat >/dev/null; date +%s%N > "` + dir + `/end.$r"`
		o := Options{Local: 2, Timing: true, ReorderRank: -1, SkewRank: -1, FaultRank: -1, MisplaceRank: -1,
			RankCmd: []string{"sh", "-c", script, "rank"}}
		plantEarlyRelease = plant
		var out, errw bytes.Buffer
		_ = RunLocal(t.Context(), o, &out, &errw) // the fake ranks' lines do not agree; only the times matter
		plantEarlyRelease = false
		stamp := func(name string) int64 {
			b, err := os.ReadFile(filepath.Join(dir, name))
			if err != nil {
				t.Fatalf("plant=%v: %v\n%s%s", plant, err, out.String(), errw.String())
			}
			v, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return v
		}
		early := stamp("end.0") < stamp("report.1")
		if early != plant {
			t.Errorf("plant=%v: rank 0 ended %.3f s after rank 1 reported", plant, float64(stamp("end.0")-stamp("report.1"))/1e9)
		}
	}
}
