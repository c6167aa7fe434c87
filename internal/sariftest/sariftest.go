// Package sariftest holds a SARIF log, for the tests of the commands that
// write one, to the OASIS SARIF 2.1.0 schema (validated by the jsonschema
// library, formats asserted) and to the rules a GitHub code scanning
// upload adds to it (docs/sarif.md#code-scanning).
package sariftest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// EnvSchemas names a directory holding sarif-schema-2.1.0.json, in place
// of the nearest shared/schemas above the working directory (the layout
// of a checkout beside the shared inputs, which .ci/run makes).
const EnvSchemas = "NRTABI_SCHEMAS"

// SchemaFile is the schema's file name.
const SchemaFile = "sarif-schema-2.1.0.json"

// MaxUpload is code scanning's limit on one upload.
const MaxUpload = 10 << 20

var (
	once    sync.Once
	schema  *jsonschema.Schema
	loadErr error
)

// Absent is the schema not being found: a test skips with it.
type Absent struct{ Where string }

func (e *Absent) Error() string {
	return fmt.Sprintf("the SARIF 2.1.0 schema is not here (%s); put the shared inputs beside the checkout (shared/schemas/%s) or set $%s to the directory holding it", e.Where, SchemaFile, EnvSchemas)
}

// SchemaPath finds the schema file: $NRTABI_SCHEMAS, else the nearest
// shared/schemas in the working directory or above it.
func SchemaPath() (string, error) {
	if d := os.Getenv(EnvSchemas); d != "" {
		p := filepath.Join(d, SchemaFile)
		if st, err := os.Stat(p); err != nil || !st.Mode().IsRegular() {
			return "", &Absent{Where: "$" + EnvSchemas + " = " + d}
		}
		return p, nil
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for dir := wd; ; {
		p := filepath.Join(dir, "shared", "schemas", SchemaFile)
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
			return p, nil
		}
		up := filepath.Dir(dir)
		if up == dir {
			return "", &Absent{Where: "no shared/schemas above " + wd}
		}
		dir = up
	}
}

func load() (*jsonschema.Schema, error) {
	once.Do(func() {
		p, err := SchemaPath()
		if err != nil {
			loadErr = err
			return
		}
		f, err := os.Open(p)
		if err != nil {
			loadErr = err
			return
		}
		defer f.Close()
		doc, err := jsonschema.UnmarshalJSON(f)
		if err != nil {
			loadErr = fmt.Errorf("%s: %w", p, err)
			return
		}
		c := jsonschema.NewCompiler()
		c.AssertFormat()
		url := "file://" + filepath.ToSlash(p)
		if err := c.AddResource(url, doc); err != nil {
			loadErr = err
			return
		}
		schema, loadErr = compileRoot(c, url, doc)
		if loadErr != nil {
			loadErr = fmt.Errorf("%s: %w", p, loadErr)
		}
	})
	return schema, loadErr
}

// compileRoot compiles the schema of a whole log. The shared copy keeps
// the log's own schema under definitions/Root, its top level holding only
// definitions, so the file's root accepts any document: a root that takes
// an empty object is not the log's schema, and definitions/Root is used
// when it is one that refuses it (docs/sarif.md#validation).
func compileRoot(c *jsonschema.Compiler, url string, doc any) (*jsonschema.Schema, error) {
	empty := map[string]any{}
	sch, err := c.Compile(url)
	if err != nil {
		return nil, err
	}
	if sch.Validate(empty) != nil {
		return sch, nil
	}
	if m, ok := doc.(map[string]any); ok {
		if defs, ok := m["definitions"].(map[string]any); ok && defs["Root"] != nil {
			if sch, err = c.Compile(url + "#/definitions/Root"); err != nil {
				return nil, err
			}
			if sch.Validate(empty) != nil {
				return sch, nil
			}
		}
	}
	return nil, errors.New("the schema accepts an empty document, and no definitions/Root of it refuses one: it checks nothing")
}

// Validate holds log to the schema, then to the upload rules (Upload).
func Validate(log []byte) error {
	sch, err := load()
	if err != nil {
		return err
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(log))
	if err != nil {
		return fmt.Errorf("not JSON: %w", err)
	}
	if err := sch.Validate(inst); err != nil {
		return fmt.Errorf("not valid SARIF 2.1.0: %w", err)
	}
	return Upload(log)
}

// Check is Validate for a test: it skips, saying what to install, when
// the schema is absent, and fails the test on an invalid log.
func Check(t testing.TB, log []byte) {
	t.Helper()
	err := Validate(log)
	var ab *Absent
	if errors.As(err, &ab) {
		t.Skipf("skipping the SARIF schema check: %v", err)
	}
	if err != nil {
		t.Fatalf("%v\n%s", err, clip(log))
	}
}

func clip(b []byte) string {
	if len(b) > 4000 {
		return string(b[:4000]) + "..."
	}
	return string(b)
}

// Upload holds log to what code scanning adds to the schema: one run;
// every result's ruleId among tool.driver.rules and its ruleIndex that
// rule's; every result at a physical location; every artifact uri
// relative, with a uriBaseId the run's originalUriBaseIds defines; every
// result with partialFingerprints; the whole log under MaxUpload.
func Upload(log []byte) error {
	if len(log) > MaxUpload {
		return fmt.Errorf("the log is %d bytes, over %d", len(log), MaxUpload)
	}
	var doc struct {
		Runs []struct {
			Tool struct {
				Driver struct {
					Rules []struct {
						ID string `json:"id"`
					} `json:"rules"`
				} `json:"driver"`
			} `json:"tool"`
			Bases   map[string]json.RawMessage `json:"originalUriBaseIds"`
			Results []struct {
				RuleID       *string           `json:"ruleId"`
				RuleIndex    *int              `json:"ruleIndex"`
				Fingerprints map[string]string `json:"partialFingerprints"`
				Locations    []location        `json:"locations"`
				Related      []location        `json:"relatedLocations"`
			} `json:"results"`
		} `json:"runs"`
	}
	if err := json.Unmarshal(log, &doc); err != nil {
		return err
	}
	if len(doc.Runs) != 1 {
		return fmt.Errorf("%d runs; code scanning wants exactly one", len(doc.Runs))
	}
	run := doc.Runs[0]
	rules := run.Tool.Driver.Rules
	for i, r := range run.Results {
		if r.RuleID == nil || r.RuleIndex == nil {
			return fmt.Errorf("result %d: no ruleId or no ruleIndex", i)
		}
		if *r.RuleIndex < 0 || *r.RuleIndex >= len(rules) || rules[*r.RuleIndex].ID != *r.RuleID {
			return fmt.Errorf("result %d: ruleIndex %d is not rule %q among the %d rules", i, *r.RuleIndex, *r.RuleID, len(rules))
		}
		if len(r.Fingerprints) == 0 {
			return fmt.Errorf("result %d (%s): no partialFingerprints", i, *r.RuleID)
		}
		// GitHub's GH1001: a result is shown at a file, or the upload is
		// refused whole.
		if len(r.Locations) == 0 || r.Locations[0].Physical == nil || r.Locations[0].Physical.Artifact.URI == "" {
			return fmt.Errorf("result %d (%s): no physical location with a uri; code scanning refuses the upload", i, *r.RuleID)
		}
		for _, l := range append(r.Locations, r.Related...) {
			if l.Physical == nil {
				continue
			}
			a := l.Physical.Artifact
			if a.URI == "" || strings.Contains(a.URI, ":") || strings.HasPrefix(a.URI, "/") {
				return fmt.Errorf("result %d (%s): uri %q is not relative", i, *r.RuleID, a.URI)
			}
			if _, ok := run.Bases[a.Base]; !ok || a.Base == "" {
				return fmt.Errorf("result %d (%s): uri %q has uriBaseId %q, which originalUriBaseIds does not define", i, *r.RuleID, a.URI, a.Base)
			}
		}
	}
	return nil
}

type location struct {
	Physical *struct {
		Artifact struct {
			URI  string `json:"uri"`
			Base string `json:"uriBaseId"`
		} `json:"artifactLocation"`
	} `json:"physicalLocation"`
}

// Fingerprints are the partialFingerprints of the run's results, in
// order, for a test that two runs give the same ones.
func Fingerprints(log []byte) ([]string, error) {
	var doc struct {
		Runs []struct {
			Results []struct {
				Fingerprints map[string]string `json:"partialFingerprints"`
			} `json:"results"`
		} `json:"runs"`
	}
	if err := json.Unmarshal(log, &doc); err != nil {
		return nil, err
	}
	var out []string
	for _, r := range doc.Runs {
		for _, x := range r.Results {
			out = append(out, fmt.Sprint(x.Fingerprints))
		}
	}
	return out, nil
}

// Collector holds every report a package's tests produce to Validate,
// through a hook the package calls with each report's log, and fails
// the run after the tests when one was invalid (After, from TestMain).
type Collector struct {
	mu     sync.Mutex
	n      int
	bad    []string
	absent error
}

// Hold validates one log; err is the failure to write it, itself a
// fault.
func (c *Collector) Hold(what string, log []byte, err error) {
	if err == nil {
		err = Validate(log)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	var ab *Absent
	switch {
	case errors.As(err, &ab):
		c.absent = err
	case err != nil:
		if len(c.bad) < 10 {
			c.bad = append(c.bad, fmt.Sprintf("%s: %v", what, err))
		}
		c.n++
	default:
		c.n++
	}
}

// After is the exit code of a test binary whose tests ran with code: 1
// when a log held was invalid, with each named; the schema's absence is
// printed as the reason nothing was validated.
func (c *Collector) After(code int) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.absent != nil {
		fmt.Fprintf(os.Stderr, "sariftest: the SARIF form of the reports was not validated: %v\n", c.absent)
		return code
	}
	if len(c.bad) > 0 {
		fmt.Fprintf(os.Stderr, "sariftest: %d of the %d reports the tests produced are not valid SARIF:\n  %s\n", len(c.bad), c.n, strings.Join(c.bad, "\n  "))
		return 1
	}
	fmt.Fprintf(os.Stderr, "sariftest: the %d reports the tests produced are valid SARIF 2.1.0\n", c.n)
	return code
}

// Held is how many logs were validated.
func (c *Collector) Held() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}
