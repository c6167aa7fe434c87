// Package model holds the Promela models of nrtabi's all-or-nothing
// protocols (the forward handoff, the per-NC bootstrap in the seed's
// shape and over the instances, the flat, hierarchical and multi-root TCP
// bootstraps, the bidirectional ring; *.pml). Each includes zspec_<release>.pml, every number and
// formula the models take from a release's spec, which `nrtabi gen --all`
// writes (gen/promela.go). The tests run spin on every model and planted
// bug against those headers, and hold the spec's formulas to the runtime's.
//
// What each model proves and how it is tied to the spec: docs/models.md.
package model
