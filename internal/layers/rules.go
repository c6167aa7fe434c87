// Package layers holds the shape of the house: which package of the module
// may import which, as a table of rooms (rules), and the checker its test
// runs over the real import graph (`go list`), so that a new upward import
// fails a test instead of slipping in. The layers, bottom up:
//
//	spec <- gen <- generated <- runtime
//	spec <- layoutcheck <- release
//	spec <- model
//	cmd/* and bench/* on top; internal/<name> helpers by name
//
// A package's room is the longest rules[i].room it lies in, so a new package
// inside a room follows that room's row with no edit. A new room, a new
// helper, or a new edge between rooms is an edit to the table, with its why.
// Its test also holds every room to a package comment saying its one job.
package layers

import (
	"fmt"
	"slices"
	"strings"
)

// rule is one room's row. Paths are relative to the module and stand for
// that package and every package under it.
type rule struct {
	// room: the packages at this path and under it, unless a longer room
	// claims them.
	room string
	// may: what the room's packages may import from any file. "!P" refuses
	// P (and what is under it) inside a broader entry; the longest entry
	// that matches an import decides.
	may []string
	// tests: what the room's tests may import on top of may.
	tests []string
	why   string
}

// rules is the table. Keep each row as tight as the real graph allows: the
// test also fails on an entry no import uses.
var rules = []rule{
	// The floor.
	{room: "spec", may: []string{"internal/esc", "internal/regfile"},
		tests: []string{"internal/hostile", "internal/specsame", "internal/spectest", "spec/compiled"},
		why:   "the spec is the floor: everything reads it and it reads nothing of ours; its tests hold the TOML to the compiled copy"},
	{room: "spec/compiled", may: []string{"spec"},
		tests: []string{"internal/specsame"},
		why:   "the embedded releases as Go data, written by gen from the spec; gen never imports it, so a stale copy can always be regenerated"},
	{room: "gen", may: []string{"internal/regfile", "spec"},
		tests: []string{"internal/cc", "internal/spectest"},
		why:   "the generator reads the spec and writes generated/ into the checkout it finds (go.mod read through the one bounded reader); it never imports its own output or what runs it"},
	{room: "generated", may: []string{"generated"},
		why: "generated code stands alone: the release selector (generated/abi) picks one release's package; no spec or generator at run time"},
	{room: "model",
		tests: []string{"gen", "internal/spectest", "runtime/collectives", "runtime/transport/tcp", "spec"},
		why:   "the Promela models hold no Go but their tests: gen writes their spec headers, and the tests hold the models to the Go collectives and the TCP bootstrap's dispatch they model"},

	// The runtime works from the generated ABI only.
	{room: "runtime", may: []string{"generated", "internal/cfmt", "internal/proc", "runtime", "!runtime/builder"},
		tests: []string{"compat", "internal/cc", "internal/hostile", "internal/netns", "internal/seamcheck", "internal/vendorbuild", "readers/elfread", "runtime/builder", "spec", "typemodel"},
		why:   "the runtime sees the generated ABI, never the spec or the generator; runtime/builder, which runs them, is for tests"},
	{room: "runtime/builder", may: []string{"gen", "internal/cc", "internal/proc", "spec"},
		why: "builder generates and compiles the C of a release for tests, benches and the demo, through the one toolchain path"},
	{room: "runtime/transport", may: []string{"generated", "internal/cfmt", "runtime/transport"},
		tests: []string{"internal/cc", "internal/hostile", "runtime/collectives", "runtime/device"},
		why:   "the transports are the runtime's bottom: the interface and its implementations; what uses them is above"},
	{room: "runtime/device", may: []string{"internal/cfmt", "internal/regfile"},
		why: "the device model is a leaf under collectives and nrt"},
	{room: "runtime/dyninput",
		why: "the dynamic-input reader is a leaf under nrt"},
	{room: "runtime/neff", may: []string{"generated", "internal/esc", "internal/regfile", "runtime/collectives"},
		tests: []string{"runtime/device", "runtime/transport/inproc"},
		why:   "the replica-group reader opens its file through regfile, escapes what it quotes of it, and yields the records runtime/collectives consumes; its test bootstraps them in an in-process world"},

	// Checking binaries against a spec, and the spec-side work above it.
	{room: "layoutcheck", may: []string{"internal/cc", "internal/esc", "internal/regfile", "internal/render", "layoutcheck", "readers", "spec", "typemodel"},
		tests: []string{"gen", "internal/debuginfod", "internal/hostile", "internal/realworld", "internal/sariftest", "internal/specsame", "internal/testbin", "release", "release/diff", "runtime/builder"},
		why: "layoutcheck checks binaries against a spec and nothing above it; its round-trip tests extract with release " +
			"and build with gen and runtime/builder, which only tests may do, and hold check's grades to diff's (one planted drift graded by both in one test); TestDebuginfod wires the debuginfod client into the lookup as the commands do"},
	// The one model of a binary's types, under its front end and every
	// reader of it.
	{room: "typemodel",
		why: "the type graph and its one C spelling are pure data and functions: the DWARF front end (readers/elfread) builds it, the checkers and the release tools read it; it imports nothing of ours"},
	// The readers: binaries, debug files, packages and archives as they are,
	// below everything that interprets them.
	{room: "readers", may: []string{"internal/regfile", "readers/elfread"},
		tests: []string{"internal/hostile"},
		why:   "the inputs and package readers turn arguments, packages and archives into ELF inputs read through elfread; they know no spec and no checker"},
	{room: "readers/elfread", may: []string{"internal/regfile", "!internal/debuginfod", "typemodel"},
		tests: []string{"internal/cc", "internal/fixture", "internal/hostile", "internal/realworld", "internal/testbin"},
		why: "elfread is a pure ELF/DWARF reader in the debug/elf style: no spec, no checker, no network; a missing debug file is fetched " +
			"through the Lookup's Fetch hook, which the commands wire to debuginfod (internal/cli), never by importing the client"},
	{room: "internal/debuginfod", may: []string{"internal/regfile"}, tests: []string{"internal/cc", "readers/elfread"},
		why: "the debuginfod client fetches by build-id over net/http and knows nothing of ELF: the caller verifies what arrives (its tests serve real objects); a cache path that is not what it should be is named by regfile"},
	{room: "readers/riprel", tests: []string{"internal/cc", "readers/elfread"},
		why: "the x86-64 decoding of a trampoline's RIP-relative targets works on bytes alone (its tests read a real trampoline)"},
	{room: "layoutcheck/specmatch", may: []string{"readers/elfread", "spec", "typemodel"},
		why: "specmatch ties spec rows to what elfread reads, for the checker and for release, between the reader and both"},
	{room: "release", may: []string{"internal/esc", "layoutcheck", "readers/elfread", "readers/riprel", "spec", "typemodel"},
		tests: []string{"gen", "internal/cc", "internal/fixture", "internal/hostile", "internal/specsame", "internal/vendorbuild", "release/diff"},
		why:   "the release workflow reads binaries through the readers and layoutcheck's matchers and writes spec rows; its tests read the real net plugin internal/vendorbuild builds, and the crafted ODR units internal/hostile builds"},
	{room: "layoutcheck/waiver", may: []string{"internal/regfile"},
		why: "the file of accepted findings of check and diff: read (a regular file, bounded) and matched against a finding's words; it knows neither report"},
	{room: "compat", may: []string{"internal/render/html", "layoutcheck/specmatch", "readers/elfread", "readers/riprel", "spec", "typemodel"},
		tests: []string{"internal/cc"},
		why:   "compat predicts from the binaries whether libnrt, libnccom and a plugin load together: it reads them through elfread, the spec's rules, and compares shared layouts in the type model; it runs nothing. Its release matrix is drawn as a page by the report's HTML writer"},
	{room: "layoutcheck/grade", may: []string{"spec"},
		why: "the one grading of struct layouts, for check (spec against DWARF) and diff (spec against spec): a neutral model with a converter from spec, no binary reading"},
	{room: "release/diff", may: []string{"internal/esc", "internal/render", "layoutcheck/grade", "spec"},
		tests: []string{"internal/sariftest", "internal/specsame"},
		why:   "the diff compares two specs and reads no binary; struct layouts are graded by layoutcheck/grade, as check grades them; names from a binary side are escaped before they are printed"},

	// On top.
	{room: "cmd/nrtabi", may: []string{"compat", "gen", "internal/cli", "internal/esc", "internal/regfile", "internal/render", "layoutcheck", "readers", "release", "spec"},
		tests: []string{"internal/cc", "internal/fixture", "internal/hostile", "internal/sariftest", "internal/spectest", "internal/testbin"},
		why:   "the pure-Go CLI (it builds with CGO_ENABLED=0): never the runtime or the generated ABI; regfile names what -o finds in place of a regular file, and its tests truncate an input under a run through regfile's open hook"},
	{room: "cmd/nrtabi-runtime",
		may:   []string{"gen", "generated", "internal/cc", "internal/cfmt", "internal/cli", "internal/proc", "layoutcheck", "readers/elfread", "release", "runtime", "spec"},
		tests: []string{"internal/netns", "internal/testbin"},
		why:   "the runtime command and its demo sit on top of everything they run"},
	{room: "bench", may: []string{"bench/benchenv", "bench/bootsim", "gen", "generated", "internal/cc", "internal/cfmt", "runtime", "spec"},
		tests: []string{"internal/netns", "internal/proc", "internal/vendorbuild"},
		why: "benchmarks sit on top and build what they measure; bench/bootscale drives the simulator bench/bootsim with what it measured; " +
			"bench/net (a go test -bench) runs its ends in the network namespaces of internal/netns over the plugin internal/vendorbuild builds"},

	{room: "tools", may: []string{"internal/regfile"},
		why: "build-time tools make install runs: mangen renders docs/' command pages as man pages (go-md2man); they link nothing of the CLIs"},

	// The manual's link test reads only files.
	{room: "docs",
		why: "docs holds the manual, the one reader of its anchors (Anchors) and a test that its links resolve; it imports nothing of ours"},

	// Helpers, allowed by name to the rooms that use them.
	{room: "internal",
		why: "a helper imports no package of ours unless its own row says so"},
	{room: "internal/layers", tests: []string{"docs"},
		why: "the house's own tests: the import table, and the housekeeping test that code cites only anchors the manual has, read by the manual's one anchor reader (docs.Anchors)"},
	{room: "internal/cfmt", may: []string{"internal/esc"}, tests: []string{"generated", "internal/hostile"},
		why: "C-style formatting and the bounded escape of peer text over esc; its test renders the messages of the generated ABI"},
	{room: "internal/cli", may: []string{"gen", "internal/debuginfod", "internal/esc", "internal/regfile", "readers/elfread", "spec"}, tests: []string{"internal/spectest"},
		why: "both commands resolve --spec (reading the checkout's go.mod and spec/NAME through regfile), summarise a release (gen's assert count), " +
			"escape what they print of the inputs, and join the debuginfod client to elfread's Fetch hook (the reader imports no network code)"},
	{room: "internal/fixture", may: []string{"gen", "internal/cc", "internal/fixture", "spec"},
		why: "fixture builds a release's real binaries from the generated C; its command wraps it"},
	{room: "internal/cc", may: []string{"internal/proc"},
		why: "every compiler run is a child process with the group kill of internal/proc"},
	{room: "internal/seamcheck", may: []string{"internal/cc"}, tests: []string{"generated"},
		why: "seamcheck compiles its C shims through the one toolchain path; its tests load runtime/nrt under the release tag generated/abi names"},
	{room: "internal/render", may: []string{"internal/esc"},
		why: "the one writer of the report formats (escaped text, JSON, JUnit, SARIF) that check's and diff's reports and their error documents go through"},
	{room: "internal/sariftest", tests: []string{"internal/render"},
		why: "sariftest holds the SARIF logs of check's and diff's tests to the OASIS schema and code scanning's upload rules; its test plants faults in a log render writes"},
	{room: "internal/render/html", tests: []string{"compat", "release/diff", "spec", "spec/compiled"},
		why: "the HTML page of a report, knowing no command (diff's page, a compatibility matrix); its browser test draws the real diff of two embedded releases and the release matrix of the embedded set"},
	{room: "internal/esc",
		why: "the one escaping of outside bytes for terminals and logs: a leaf"},
	{room: "internal/vendorbuild", may: []string{"internal/esc", "internal/proc"},
		why: "vendorbuild builds the third-party net plugin from its tarballs in a scratch cache: its steps are child processes of internal/proc, its log's end escaped before it is quoted"},
	{room: "internal/hostile", may: []string{"internal/cc"},
		why: "hostile crafts bad objects with the one toolchain path"},
	{room: "internal/realworld",
		why: "realworld says where the opt-in wide runs read the machine's real artefacts, and skips them unless asked: a leaf"},
	{room: "internal/specsame", may: []string{"spec"},
		why: "specsame compares a loaded release with its TOML"},
}

// edge is one import of one package of the module by another, by their
// paths relative to the module; test when test files make it (the same
// import from a non-test file is another edge).
type edge struct {
	from, to string
	test     bool
}

// within reports whether path is prefix or lies under it.
func within(prefix, path string) bool {
	return path == prefix || strings.HasPrefix(path, prefix+"/")
}

// roomOf is the row of pkg's room: the longest room it lies in, or nil.
func roomOf(table []rule, pkg string) *rule {
	var best *rule
	for i := range table {
		if within(table[i].room, pkg) && (best == nil || len(table[i].room) > len(best.room)) {
			best = &table[i]
		}
	}
	return best
}

// decide is the entry of list that decides about importing to (the longest
// that matches, "!" ignored for length), and whether it allows it.
func decide(list []string, to string) (entry string, ok bool) {
	for _, e := range list {
		p := strings.TrimPrefix(e, "!")
		if within(p, to) && len(p) > len(strings.TrimPrefix(entry, "!")) {
			entry = e
		}
	}
	return entry, entry != "" && !strings.HasPrefix(entry, "!")
}

// allowedBy is the entry of r that allows e ("" if none), with whether it
// is a tests entry.
func allowedBy(r *rule, e edge) (entry string, tests bool) {
	if entry, ok := decide(r.may, e.to); ok {
		return entry, false
	}
	if e.test {
		if entry, ok := decide(r.tests, e.to); ok {
			return entry, true
		}
	}
	return "", false
}

// check reports, one line each, the packages in no room and the edges their
// room does not allow. A package importing itself (an external test) is not
// an edge.
func check(table []rule, pkgs []string, edges []edge) []string {
	var out []string
	for _, p := range pkgs {
		if roomOf(table, p) == nil {
			out = append(out, fmt.Sprintf("%s is in no room: add a row for it to internal/layers/rules.go", p))
		}
	}
	for _, e := range edges {
		r := roomOf(table, e.from)
		if r == nil || e.from == e.to {
			continue
		}
		if entry, _ := allowedBy(r, e); entry == "" {
			what := "imports"
			if e.test {
				what = "imports in its tests"
			}
			out = append(out, fmt.Sprintf("%s %s %s: room %s does not allow it (%s); if the edge is right, add it to that row in internal/layers/rules.go",
				e.from, what, e.to, r.room, r.why))
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// slack reports what the table allows that no import needs: rooms with no
// package, and entries that allow no edge. A may entry that only tests use
// belongs in tests, so only production edges count for may. Refusals ("!")
// are not counted.
func slack(table []rule, pkgs []string, edges []edge) []string {
	type use struct {
		room, entry string
		tests       bool
	}
	used := map[use]bool{}
	occupied := map[string]bool{}
	for _, p := range pkgs {
		if r := roomOf(table, p); r != nil {
			occupied[r.room] = true
		}
	}
	for _, e := range edges {
		r := roomOf(table, e.from)
		if r == nil || e.from == e.to {
			continue
		}
		if entry, tests := allowedBy(r, e); entry != "" && (!e.test || tests) {
			used[use{r.room, entry, tests}] = true
		}
	}
	var out []string
	for _, r := range table {
		if !occupied[r.room] {
			out = append(out, fmt.Sprintf("room %s holds no package: remove its row", r.room))
			continue
		}
		for _, e := range r.may {
			if !strings.HasPrefix(e, "!") && !used[use{r.room, e, false}] {
				out = append(out, fmt.Sprintf("room %s may import %s, but no non-test file there does: remove it, or move it to tests", r.room, e))
			}
		}
		for _, e := range r.tests {
			if !used[use{r.room, e, true}] {
				out = append(out, fmt.Sprintf("room %s's tests may import %s, but none does (or may already allows it): remove it", r.room, e))
			}
		}
	}
	return out
}

// malformed reports rows the checker would read wrongly: a room listed
// twice, a path that is not a clean module-relative path, a refusal in
// tests, a row without its why.
func malformed(table []rule) []string {
	var out []string
	clean := func(p string) bool {
		return p != "" && !strings.HasPrefix(p, "/") && !strings.HasSuffix(p, "/") && !strings.Contains(p, "//") &&
			!slices.Contains(strings.Split(p, "/"), "..") && !slices.Contains(strings.Split(p, "/"), ".")
	}
	seen := map[string]bool{}
	for _, r := range table {
		if seen[r.room] {
			out = append(out, fmt.Sprintf("room %s has two rows", r.room))
		}
		seen[r.room] = true
		if !clean(r.room) {
			out = append(out, fmt.Sprintf("room %q is not a clean path relative to the module", r.room))
		}
		if strings.TrimSpace(r.why) == "" {
			out = append(out, fmt.Sprintf("room %s says no why", r.room))
		}
		for _, e := range r.may {
			if !clean(strings.TrimPrefix(e, "!")) {
				out = append(out, fmt.Sprintf("room %s: may entry %q is not a clean path relative to the module", r.room, e))
			}
		}
		for _, e := range r.tests {
			if strings.HasPrefix(e, "!") || !clean(e) {
				out = append(out, fmt.Sprintf("room %s: tests entry %q is not a clean path relative to the module (refusals belong in may)", r.room, e))
			}
		}
	}
	return out
}
