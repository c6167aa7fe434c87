package bootsim

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func sampleFitted() *Fitted {
	return &Fitted{Date: "2026-12-02T20:00:00Z", Load: "1 2 3", NProc: "2", FitMaxN: 64,
		Go:   Params{Fixed: 1e-3, Accept: 1e-4, Hop: 2e-4, Gathers: 2, RankDelay: true},
		C:    Params{Hop: 1e-4, Gathers: 2},
		Rows: []MeasuredRow{{Variant: "hier-go-bidi", Algo: "hier", Lang: "go", Bidi: true, N: 64, L: 8, BootMs: 20, AgreeMs: 60}}}
}

func TestFittedRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "fitted.json")
	if err := SaveFitted(path, sampleFitted()); err != nil {
		t.Fatal(err)
	}
	got, err := LoadFitted(path)
	if err != nil {
		t.Fatal(err)
	}
	if got.Go != sampleFitted().Go || len(got.Rows) != 1 || got.Rows[0] != sampleFitted().Rows[0] {
		t.Errorf("read back %+v", got)
	}
}

// Each refusal, planted in an otherwise good file.
func TestFittedRefusals(t *testing.T) {
	good, err := os.ReadFile(func() string {
		p := filepath.Join(t.TempDir(), "f.json")
		if err := SaveFitted(p, sampleFitted()); err != nil {
			t.Fatal(err)
		}
		return p
	}())
	if err != nil {
		t.Fatal(err)
	}
	for name, edit := range map[string][2]string{
		"unknown field":   {`"date"`, `"dat"`},
		"trailing data":   {"\n}\n", "\n} {}\n"},
		"negative cost":   {`"Hop": 0.0002`, `"Hop": -0.0002`},
		"unknown algo":    {`"algo": "hier"`, `"algo": "tree"`},
		"unknown lang":    {`"lang": "go"`, `"lang": "rust"`},
		"not a world":     {`"l": 8`, `"l": 80`},
		"zero boot":       {`"boot_ms": 20`, `"boot_ms": 0`},
		"fit_max_n":       {`"fit_max_n": 64`, `"fit_max_n": 1`},
		"escape in name":  {`"variant": "hier-go-bidi"`, `"variant": "hier\u001b[2J"`},
		"too many gather": {`"Gathers": 2,`, `"Gathers": 99,`},
		"negative cores":  {`"Cores": 0,`, `"Cores": -2,`},
		"negative work":   {`"Work": 0,`, `"Work": -1e-5,`},
		"share over 1":    {`"Avail": 0`, `"Avail": 1.5`},
		"negative setup":  {`"AgreeWork": 0,`, `"AgreeWork": -1e-3,`},
		"row share":       {`"agree_ms":`, `"avail": 2, "agree_ms":`},
		"row cpu":         {`"agree_ms":`, `"cpu_ms": -1, "agree_ms":`},
		"agree path":      {`"rows":`, `"agree_path": "tree", "rows":`},
	} {
		bad := strings.Replace(string(good), edit[0], edit[1], 1)
		if bad == string(good) {
			t.Fatalf("%s: %q is not in the file", name, edit[0])
		}
		if _, err := ParseFitted([]byte(bad)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	dir := t.TempDir()
	if _, err := LoadFitted(dir); err == nil {
		t.Error("a directory: accepted")
	}
}

func FuzzParseFitted(f *testing.F) {
	p := filepath.Join(f.TempDir(), "f.json")
	if err := SaveFitted(p, sampleFitted()); err != nil {
		f.Fatal(err)
	}
	seed, err := os.ReadFile(p)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(seed)
	f.Add([]byte(`{}`))
	f.Add([]byte(`{"fit_max_n": 64, "rows": [{"algo": "star"}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		fit, err := ParseFitted(data)
		if err != nil {
			return
		}
		// what it accepts simulates without an error or a panic
		for _, r := range fit.Rows {
			a, _ := ParseAlgo(r.Algo)
			pt := Point{Algo: a, N: min(r.N, 4096), L: min(r.L, r.N, 4096), Bidi: r.Bidi, Roots: min(r.Roots, 1)}
			_, _ = pt.Sim(fit.Go)
		}
	})
}
