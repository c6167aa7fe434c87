package main

import "github.com/nrtabi/nrtabi/bench/bootsim"

// cpuSplit is the least-squares split (on relative error) of the
// measured CPU of the rows of lang of at most maxN ranks into a part per
// rank process, a part per voluntary context switch and a part per ring
// message of the world, in seconds
// (docs/benchmarks.md#the-simulator): a message that must sleep for its
// frame pays the wake-up, the switch's share; one whose frame was queued
// pays the message's share (a Go rank's is about nothing: the split gives
// it below 0, kept at 0; a C host's poll and read are not). ok is false when fewer than 4 rows carry the counts (rows
// measured before they were) or a rank or a switch comes out free.
func cpuSplit(rows []bootsim.MeasuredRow, agreePath, lang string, maxN int, excluded map[string]string) (perRank, perSwitch, perMsg float64, ok bool) {
	// the world's ring messages: the boot's two gathers, and, before the
	// group's comm was split from the world's (docs/bootstrap.md#group-comm-split),
	// as many again in the agree phase, whose group comm init was a second
	// bootstrap of the same shape (docs/bootstrap.md#group-comm-init)
	gathers := 4
	if agreePath == "split" {
		gathers = 2
	}
	var x [][]float64
	var y []float64
	for _, r := range rows {
		if r.Lang != lang || r.N > maxN || excluded[r.Variant] != "" || r.CPUMs <= 0 || r.Nvcsw <= 0 {
			continue
		}
		a, err := bootsim.ParseAlgo(r.Algo)
		if err != nil {
			continue
		}
		x = append(x, []float64{float64(r.N), r.Nvcsw, bootsim.Messages(a, r.N, r.L, r.Bidi, gathers)})
		y = append(y, r.CPUMs/1e3)
	}
	if len(x) < 4 {
		return 0, 0, 0, false
	}
	th, err := bootsim.RelLeastSquares(x, y)
	if err != nil {
		return 0, 0, 0, false
	}
	perRank, perSwitch, perMsg = th[0], th[1], max(th[2], 0)
	return perRank, perSwitch, perMsg, perRank > 0 && perSwitch > 0 && perSwitch < 1e-2 && perMsg < 1e-2
}
