// Package addrelease is the end-to-end scenario of adding a release (issue
// 24's acceptance, docs/adding-a-release.md): from a vendor-style header
// tree (testdata/include, with drift planted against 2.31.24; its README
// lists it) to a running boundary, as a user runs it, in a copy of the
// module checkout. It holds only its test.
package addrelease
