package render

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strings"
)

// SARIF 2.1.0 output (docs/sarif.md): a report hands SARIF one SARIFRun — its
// rules and one SARIFResult per fact — and SARIF writes the log: one run,
// every result's rule by id and by index, a physical location where the
// fact has a file, a logical one always, the fact's consequences as
// related locations, and a fingerprint GitHub code scanning tracks the
// alert by. Nothing of the log is written unless all of it fits the
// upload limit.

// SARIFVersion and SARIFSchema name the format the log follows.
const (
	SARIFVersion = "2.1.0"
	SARIFSchema  = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
)

// SourceRootID is the uriBaseId of every location under --source-root:
// the log's originalUriBaseIds says where it is, and code scanning
// resolves it to the checkout (docs/sarif.md#locations).
const SourceRootID = "SRCROOT"

// FileRootID is the uriBaseId of a file outside --source-root (a header of
// /usr/include, a library's build machine path): relative to the
// filesystem's root, so that the location keeps its file, and its uri is
// relative, as code scanning wants every uri (docs/sarif.md#locations).
const FileRootID = "FSROOT"

// MaxSARIF is the largest log written: GitHub code scanning refuses an
// upload above 10 MiB (docs/sarif.md#code-scanning).
const MaxSARIF = 10 << 20

// maxRelated bounds the related locations of one result; GitHub reads at
// most 1000 (docs/sarif.md#code-scanning).
const maxRelated = 1000

// Level words (SARIF §3.27.10).
const (
	LevelError   = "error"
	LevelWarning = "warning"
	LevelNote    = "note"
)

// SARIFRun is what a report hands SARIF: the tool, the rules its findings use,
// the findings, and the source root relative uris hang from ("" keeps
// absolute file uris).
type SARIFRun struct {
	Tool, Version, InformationURI string
	Rules                         []SARIFRule
	Findings                      []SARIFResult
	SourceRoot                    string
	// Properties are the run's own (the verdict, the exit status).
	Properties map[string]any
	// Anchor is the file a result with no file of its own is shown at (an
	// input), since code scanning refuses a result without a physical
	// location; "" for none.
	Anchor string
}

// SARIFRule is one kind of fact: Level is its default level.
type SARIFRule struct {
	ID, Short, Full, HelpURI, Level string
}

// Place is where something is: a file and line when the fact has them,
// and the logical names (struct, field, symbol) it always has.
type Place struct {
	File    string // a path as the input named it: absolute, or relative to the source root
	Line    int    // 0: no line
	Logical []Logical
	// Unresolved says why the file is not known (the location's
	// properties keep it, and the line).
	Unresolved string
}

// Logical is a logical location (SARIF §3.33): Kind is "type", "member",
// "function" or "module".
type Logical struct {
	Name, FullyQualifiedName, Kind string
}

// Waiver is why a finding does not count: who accepted it and why. A
// finding with one carries a suppression of kind external (SARIF
// §3.35), so code scanning shows it closed (docs/sarif.md#waivers).
type Waiver struct {
	Who string `json:"who,omitempty"`
	Why string `json:"why"`
}

// SARIFResult is one fact, a result of the log.
type SARIFResult struct {
	RuleID, Level, Message string
	Place
	// Related are the fact's consequences, each with its message.
	Related []Related
	// Key names the fact apart from its numbers and its line: the input,
	// the rule and the logical name; its hash is the result's
	// partialFingerprints entry.
	Key    string
	Waived *Waiver
	// Properties are the fact's own (its grade, severity).
	Properties map[string]any
}

// Related is one consequence of a fact.
type Related struct {
	Message string
	Place
}

// SARIF writes run as a SARIF 2.1.0 log, two-space indented with a
// trailing newline, or nothing and an error when a finding names a rule
// the run does not list or the log is over MaxSARIF.
func SARIF(w io.Writer, run SARIFRun) error {
	b, err := SARIFBytes(run)
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}

// SARIFBytes is the log SARIF writes.
func SARIFBytes(run SARIFRun) ([]byte, error) {
	rules := append([]SARIFRule(nil), run.Rules...)
	sort.Slice(rules, func(a, b int) bool { return rules[a].ID < rules[b].ID })
	index := map[string]int{}
	out := sarifRun{Tool: sarifTool{Driver: sarifDriver{Name: run.Tool, Version: run.Version, InformationURI: run.InformationURI, Rules: []sarifRule{}}},
		Results: []sarifResult{}, Properties: run.Properties}
	for i, r := range rules {
		if _, dup := index[r.ID]; dup {
			return nil, fmt.Errorf("sarif: rule %q listed twice", r.ID)
		}
		index[r.ID] = i
		sr := sarifRule{ID: r.ID, Name: ruleName(r.ID), ShortDescription: &sarifText{Text: r.Short}, HelpURI: r.HelpURI,
			DefaultConfiguration: &sarifConfig{Level: r.Level}}
		if r.Full != "" {
			sr.FullDescription = &sarifText{Text: r.Full}
		}
		out.Tool.Driver.Rules = append(out.Tool.Driver.Rules, sr)
	}
	lc := &locater{}
	root := ""
	if run.SourceRoot != "" {
		abs, err := filepath.Abs(run.SourceRoot)
		if err != nil {
			return nil, fmt.Errorf("--source-root %s: %w", run.SourceRoot, err)
		}
		root = filepath.ToSlash(filepath.Clean(abs))
		out.OriginalURIBaseIDs = map[string]sarifArtifactLocation{SourceRootID: {URI: fileURI(strings.TrimSuffix(root, "/") + "/")}}
	}
	lc.root = root
	homeless := 0
	seen := map[string]int{}
	for _, f := range run.Findings {
		i, ok := index[f.RuleID]
		if !ok {
			return nil, fmt.Errorf("sarif: finding %q names rule %q, which the run does not list", f.Message, f.RuleID)
		}
		res := sarifResult{RuleID: f.RuleID, RuleIndex: i, Level: f.Level, Message: sarifText{Text: f.Message},
			Properties: f.Properties}
		l := lc.location(f.Place, "")
		if l.PhysicalLocation == nil && run.Anchor != "" {
			l.PhysicalLocation = lc.location(Place{File: run.Anchor}, "").PhysicalLocation
			if l.PhysicalLocation != nil {
				if l.Properties == nil {
					l.Properties = map[string]any{}
				}
				l.Properties["anchor"] = "the fact has no file of its own; shown at the input"
			}
		}
		if l.PhysicalLocation == nil {
			homeless++
		}
		res.Locations = []sarifLocation{l}
		// Two facts of one key (the same rule at the same name twice in an
		// input) stay two alerts, in report order.
		key := f.RuleID + "\x00" + f.Key
		n := seen[key]
		seen[key]++
		if n > 0 {
			key += fmt.Sprintf("\x00%d", n)
		}
		sum := sha256.Sum256([]byte(key))
		res.PartialFingerprints = map[string]string{"nrtabiFact/v1": hex.EncodeToString(sum[:16])}
		for j, r := range f.Related {
			if j == maxRelated {
				res.Message.Text += fmt.Sprintf(" (%d more consequences not listed)", len(f.Related)-maxRelated)
				break
			}
			l := lc.location(r.Place, r.Message)
			l.ID = j + 1
			res.RelatedLocations = append(res.RelatedLocations, l)
		}
		if f.Waived != nil {
			s := sarifSuppression{Kind: "external", Status: "accepted", Justification: f.Waived.Why}
			if f.Waived.Who != "" {
				s.Properties = map[string]any{"who": f.Waived.Who}
			}
			res.Suppressions = []sarifSuppression{s}
		}
		out.Results = append(out.Results, res)
	}
	if lc.fsRoot {
		if out.OriginalURIBaseIDs == nil {
			out.OriginalURIBaseIDs = map[string]sarifArtifactLocation{}
		}
		out.OriginalURIBaseIDs[FileRootID] = sarifArtifactLocation{URI: "file:///"}
	}
	if homeless > 0 {
		// Said, not hidden: code scanning refuses such a result.
		out.Invocations = []sarifInvocation{{ExecutionSuccessful: true, Notifications: []sarifNotification{{Level: LevelWarning,
			Message: sarifText{Text: fmt.Sprintf("%d results have no file: code scanning refuses a result without a physical location", homeless)}}}}}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	if err := enc.Encode(sarifLog{Schema: SARIFSchema, Version: SARIFVersion, Runs: []sarifRun{out}}); err != nil {
		return nil, err
	}
	if buf.Len() > MaxSARIF {
		return nil, fmt.Errorf("the SARIF log is %d bytes, over the %d-byte limit of a code scanning upload; check fewer inputs in one run", buf.Len(), MaxSARIF)
	}
	return buf.Bytes(), nil
}

// SARIFFailure writes the log of a run that stopped with an error before
// its report: no results, and an invocation that did not succeed, whose
// notification is the error's message naming the input, so that code
// scanning shows the failure rather than a clean run (docs/sarif.md).
func SARIFFailure(w io.Writer, tool, version, input, msg string, exit int) error {
	inv := sarifInvocation{ExecutionSuccessful: false, ExitCode: &exit,
		Notifications: []sarifNotification{{Level: LevelError, Message: sarifText{Text: msg},
			Locations: []sarifLocation{{LogicalLocations: []sarifLogical{{Name: input, FullyQualifiedName: input, Kind: "module"}}}}}}}
	run := sarifRun{Tool: sarifTool{Driver: sarifDriver{Name: tool, Version: version, Rules: []sarifRule{}}},
		Invocations: []sarifInvocation{inv}, Results: []sarifResult{}}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(sarifLog{Schema: SARIFSchema, Version: SARIFVersion, Runs: []sarifRun{run}})
}

// ruleName is a rule id as SARIF's name wants it: a word (field-moved ->
// FieldMoved).
func ruleName(id string) string {
	var b strings.Builder
	up := true
	for _, r := range id {
		if r == '-' || r == '/' || r == '.' || r == '_' {
			up = true
			continue
		}
		if up && r >= 'a' && r <= 'z' {
			r -= 'a' - 'A'
		}
		up = false
		b.WriteRune(r)
	}
	return b.String()
}
