// Package render is the one writer of nrtabi's four report formats, for
// check's and diff's reports and the error document of either: text a
// terminal shows (every outside string escaped, a fact's consequences
// indented under it), JSON (two-space indent, one document), JUnit XML
// (suites of test cases; docs/nrtabi-check.md#junit-output, docs/ci.md),
// and SARIF 2.1.0 (one result per fact, for code scanning; docs/sarif.md).
// It knows no report: each report builds its rows, its JSON value or its
// JUnit suites and hands them here.
package render
