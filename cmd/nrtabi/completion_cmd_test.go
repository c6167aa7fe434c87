package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestCompleteCandidates: __complete answers from the registry (commands,
// groups, flags, the synopsis' value lists) and the spec (release and
// struct names of the --spec the line names). In process, milliseconds.
func TestCompleteCandidates(t *testing.T) {
	for _, c := range []struct {
		words []string
		want  []string
		last  string
	}{
		{[]string{""}, []string{"check", "diff", "spec", "release", "help"}, ":nofiles"},
		{[]string{"spec", ""}, []string{"show", "validate"}, ":nofiles"},
		{[]string{"check", "--fa"}, []string{"--fail-on", "--fail-on-unused-waivers"}, ":nofiles"},
		{[]string{"check", "--format", ""}, []string{"text", "json", "junit"}, ":nofiles"},
		{[]string{"check", "--spec", ""}, []string{"2.31.24", "2.32.0-synthetic"}, ":files"},
		{[]string{"check", "--spec", "2.32.0-synthetic", "--require", "enc_g"}, []string{"enc_glb_comm"}, ":nofiles"},
		{[]string{"show", "nec_v"}, []string{"nec_version_info_t"}, ":nofiles"},
		{[]string{"show", "nec_version_info_t", ""}, nil, ":files"},
		{[]string{"diff", "2.3"}, []string{"2.31.24", "2.32.0-synthetic"}, ":files"},
		{[]string{"completion", ""}, []string{"bash", "zsh", "fish"}, ":nofiles"},
	} {
		rc, out, errw := runCLI(append([]string{"__complete"}, c.words...)...)
		lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
		if rc != 0 || errw != "" || lines[len(lines)-1] != c.last {
			t.Errorf("%q: exit %d, last line %q, want %q\n%s%s", c.words, rc, lines[len(lines)-1], c.last, out, errw)
		}
		for _, w := range c.want {
			if !strings.Contains("\n"+out, "\n"+w+"\n") {
				t.Errorf("%q: lacks %q:\n%s", c.words, w, out)
			}
		}
	}
	if rc, out, _ := runCLI("completion", "--help"); rc != 0 || !strings.Contains(out, "usage: nrtabi completion bash|zsh|fish") {
		t.Errorf("completion --help: exit %d\n%s", rc, out)
	}
	if rc, _, errw := runCLI("completion", "tcsh"); rc != 2 || !strings.Contains(errw, "unknown shell \"tcsh\"") {
		t.Errorf("completion tcsh: exit %d %s", rc, errw)
	}
}

// TestCompletionScripts runs each shell's script with the built binary on
// PATH: bash completes a flag's values through the function it registers,
// fish through complete -C; zsh's completion system needs a terminal, so
// its script is syntax-checked (zsh -n). Cost: one shell start each.
func TestCompletionScripts(t *testing.T) {
	bin := nrtabiBinary(t)
	env := append(os.Environ(), "PATH="+filepath.Dir(bin)+string(os.PathListSeparator)+os.Getenv("PATH"))
	script := func(shell string) string {
		rc, out, errw := runCLI("completion", shell)
		if rc != 0 {
			t.Fatalf("completion %s: exit %d %s", shell, rc, errw)
		}
		p := filepath.Join(t.TempDir(), "nrtabi."+shell)
		if err := os.WriteFile(p, []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	sh := func(shell string, args ...string) string {
		path, err := exec.LookPath(shell)
		if err != nil {
			t.Logf("skipping the %s script: no %s (apt-get install %s)", shell, shell, shell)
			return ""
		}
		cmd := exec.Command(path, args...)
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s %q: %v\n%s", shell, args, err, out)
		}
		return string(out)
	}
	b := script("bash")
	out := sh("bash", "-c", `source "$1" && complete -p nrtabi && COMP_WORDS=(nrtabi check --format '') COMP_CWORD=3 && _nrtabi_complete && printf '[%s]\n' "${COMPREPLY[@]}"`, "bash", b)
	if !strings.Contains(out, "-F _nrtabi_complete nrtabi") || !strings.Contains(out, "[text]\n[json]\n[junit]\n") {
		t.Errorf("bash completion:\n%s", out)
	}
	sh("zsh", "-n", script("zsh"))
	if _, err := exec.LookPath("fish"); err != nil {
		t.Logf("skipping the fish script: no fish (apt-get install fish)")
	} else if out := sh("fish", "-c", `source $argv[1]; complete -C"nrtabi check --role "`, script("fish")); !strings.Contains(out, "libnccom-net\n") {
		t.Errorf("fish completion:\n%s", out)
	}
}
