// Package model holds the Promela models of nrtabi's three all-or-nothing
// protocols (the forward handoff, the per-NC bootstrap, the flat TCP
// bootstrap; *.pml). Each includes zspec_<release>.pml, every number and
// formula the models take from a release's spec, which `nrtabi gen --all`
// writes (gen/promela.go). The tests run spin on every model and planted
// bug against those headers, and hold the spec's formulas to the runtime's.
//
// What each model proves and how it is tied to the spec: docs/models.md.
package model
