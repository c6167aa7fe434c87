// Package benchenv is what every bench program under bench/ prints beside
// its numbers and how it reduces repeated runs: the machine's CPUs and load
// (docs/benchmarks.md dates each table with them) and the median.
package benchenv

import (
	"os"
	"runtime"
	"sort"
	"strconv"
	"strings"
)

// Median is the middle of v (the mean of the two middle values for an even
// count), leaving v as it was; 0 for none.
func Median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// NProc is the number of CPUs this process may run on (its affinity mask,
// as nproc(1) counts them).
func NProc() string { return strconv.Itoa(runtime.NumCPU()) }

// LoadAvg is the 1, 5 and 15 minute load averages, "?" when /proc does not
// say.
func LoadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}
