// Package e2e holds the runtime boundary's end-to-end tests: nrtabi's Go
// libnrt.so.1, the libnccom doubles and small C hosts, built with the real
// toolchain and run under the real dynamic linker. Each scenario is a
// directory under testdata (a run.sh, its expected output, and any sources
// of its own); `go test` builds the artefacts once and runs every scenario.
//
// What they drive: docs/runtime-boundary.md.
package e2e
