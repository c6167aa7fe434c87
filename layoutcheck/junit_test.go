package layoutcheck

import (
	"bytes"
	"encoding/xml"
	"strings"
	"testing"
)

// TestJUnit: the XML parses; each input is a suite with one case per
// struct found and per contract rule; an incompatible finding fails its
// case with the finding's message; absent structs are skipped cases.
func TestJUnit(t *testing.T) {
	f := loadFixtures(t)
	h := compileHeaders(t, neuronInclude)
	// libnrt holds every struct and the contract; the headers four, and
	// miss the --require'd ncclComm when read first alone.
	alone := runCheck(t, f, Options{Require: []string{"ncclComm"}}, h.Object)
	r := runCheck(t, f, Options{}, f.libnrt, h.Object)
	r.Absent, r.Required = alone.Absent, alone.Required
	for _, fd := range alone.Findings {
		if fd.Kind == KindMissingStruct {
			r.add(fd)
		}
	}
	var b bytes.Buffer
	if err := r.WriteJUnit(&b); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Tests    int `xml:"tests,attr"`
		Failures int `xml:"failures,attr"`
		Skipped  int `xml:"skipped,attr"`
		Suites   []struct {
			Name     string `xml:"name,attr"`
			Tests    int    `xml:"tests,attr"`
			Failures int    `xml:"failures,attr"`
			Cases    []struct {
				Name      string `xml:"name,attr"`
				Classname string `xml:"classname,attr"`
				Failure   *struct {
					Message string `xml:"message,attr"`
					Text    string `xml:",chardata"`
				} `xml:"failure"`
				Skipped *struct{} `xml:"skipped"`
				Out     string    `xml:"system-out"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatalf("%v\n%s", err, b.String())
	}
	if len(doc.Suites) != 3 {
		t.Fatalf("%d suites, want the two inputs and the absent structs", len(doc.Suites))
	}
	total, failures := 0, 0
	for i, fr := range r.Files {
		s := doc.Suites[i]
		if s.Name != fr.Path || s.Tests != len(fr.Structs)+len(fr.Enums)+len(fr.Contract) || len(s.Cases) != s.Tests {
			t.Errorf("suite %q: %d tests (%d cases), want %d structs + %d enums + %d rules", s.Name, s.Tests, len(s.Cases), len(fr.Structs), len(fr.Enums), len(fr.Contract))
		}
		for _, c := range s.Cases {
			if c.Failure != nil {
				failures++
			}
		}
		total += s.Tests
	}
	if len(r.Files[0].Contract) == 0 || doc.Suites[0].Cases[len(r.Files[0].Structs)+len(r.Files[0].Enums)].Classname != "contract.libnrt" {
		t.Errorf("libnrt's contract rules are not cases: %+v", doc.Suites[0].Cases)
	}
	var fam, renamed bool
	for _, c := range doc.Suites[1].Cases {
		switch c.Name {
		case "nrt_instance_info_t":
			fam = c.Failure != nil && strings.HasPrefix(c.Failure.Message, "nrt_instance_info_t.family: type int32_t, spec u32") &&
				strings.Contains(c.Out, "renamed to revision")
		case "enc_neuron_device_info_t":
			renamed = c.Failure == nil && strings.Contains(c.Out, "type renamed enc_histogram_config_t -> nec_histogram_cfg_t")
		}
	}
	if !fam || !renamed {
		t.Errorf("headers suite: incompatible case failed %v, compatible case passed with output %v:\n%s", fam, renamed, b.String())
	}
	absent := doc.Suites[2]
	if len(absent.Cases) != len(r.Absent) {
		t.Errorf("absent suite: %d cases, %d absent structs", len(absent.Cases), len(r.Absent))
	}
	for _, c := range absent.Cases {
		if c.Name == "ncclComm" {
			if c.Failure == nil || !strings.Contains(c.Failure.Message, "required struct not found") {
				t.Errorf("a missing --require'd struct does not fail: %+v", c)
			}
			failures++
		} else if c.Skipped == nil {
			t.Errorf("absent %s not skipped", c.Name)
		}
	}
	total += len(absent.Cases)
	if doc.Tests != total || doc.Failures != failures || failures != 2 || doc.Skipped != len(r.Absent)-1 {
		t.Errorf("totals: tests %d (counted %d), failures %d (counted %d, want 2), skipped %d", doc.Tests, total, doc.Failures, failures, doc.Skipped)
	}
}
