package gen

import (
	"bytes"
	"strings"
	"testing"
	"testing/fstest"
	"text/template"

	"github.com/nrtabi/nrtabi/spec"
)

// TestCTemplatesRenderAsTextTemplate renders every C artefact of every
// embedded release and of the test spec with the executor and with
// text/template, and wants the same bytes.
func TestCTemplatesRenderAsTextTemplate(t *testing.T) {
	ref := template.Must(template.New("").Funcs(template.FuncMap{"cstr": cString}).ParseFS(templateFS, "templates/*.tmpl"))
	seen := map[string]int{}
	orig := execTemplate
	t.Cleanup(func() { execTemplate = orig })
	execTemplate = func(name string, data any) ([]byte, error) {
		got, err := orig(name, data)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			return got, err
		}
		var want bytes.Buffer
		if err := ref.ExecuteTemplate(&want, name, data); err != nil {
			t.Fatalf("text/template %s: %v", name, err)
		}
		if !bytes.Equal(got, want.Bytes()) {
			t.Errorf("%s renders differently from text/template (golden: text/template):\n%s", name, firstDiff(want.Bytes(), got))
		}
		seen[name]++
		return got, nil
	}
	specs := []*spec.Spec{loadMini(t)}
	for _, r := range spec.Releases() {
		s, err := spec.Load(r)
		if err != nil {
			t.Fatal(err)
		}
		specs = append(specs, s)
	}
	for _, s := range specs {
		if _, err := Generate(s); err != nil {
			t.Fatalf("%s: %v", s.Release.Name, err)
		}
	}
	names, _ := templateFS.ReadDir("templates")
	for _, n := range names {
		if seen[n.Name()] == 0 {
			t.Errorf("%s was never rendered", n.Name())
		}
	}
}

// TestCTemplateExecutorRefuses: what the executor cannot run is refused when
// the templates are parsed, and a method is never called for a field.
func TestCTemplateExecutorRefuses(t *testing.T) {
	for text, want := range map[string]string{
		`{{with .A}}x{{end}}`:           "WithNode",
		`{{$x := .A}}{{$x}}`:            "variables",
		`{{range $i, $v := .A}}{{end}}`: "range variable",
		`{{define "x"}}y{{end}}`:        "{{define}}",
		`{{template "t.tmpl" .}}`:       "TemplateNode",
		`{{.A.B | len}}{{1.5}}`:         "",
	} {
		_, err := parseCTemplates(fstest.MapFS{"t.tmpl": {Data: []byte(text)}}, "*.tmpl")
		switch {
		case want == "" && err != nil:
			t.Errorf("%s: %v", text, err)
		case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
			t.Errorf("%s: got %v, want an error naming %q", text, err, want)
		}
	}
	set, err := parseCTemplates(fstest.MapFS{"m.tmpl": {Data: []byte(`{{.Method}}`)}, "n.tmpl": {Data: []byte(`{{1.5}}`)}}, "*.tmpl")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := set.execute("m.tmpl", withMethod{}); err == nil || !strings.Contains(err.Error(), "no exported field Method") {
		t.Errorf("a method was called as a field: %v", err)
	}
	if _, err := set.execute("n.tmpl", nil); err == nil || !strings.Contains(err.Error(), "integer") {
		t.Errorf("a float constant: %v", err)
	}
}

type withMethod struct{}

func (withMethod) Method() string { return "called" }
