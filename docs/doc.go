// Package docs holds the project's manual: one page per command in the
// style of a man page and one per topic (start at docs/README.md), and the
// test that every relative link in README.md and docs/*.md resolves; Anchors
// reads a page's anchors for that test and for the housekeeping test that
// code cites only anchors that exist.
package docs
