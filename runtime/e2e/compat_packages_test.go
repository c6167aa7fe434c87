package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nrtabi/nrtabi/runtime/builder"
)

// debSet builds Debian-style package pairs of shared objects: each library
// stripped into NAME.deb with its DWARF under usr/lib/debug/.build-id in
// NAME-dbgsym.deb, as dh_strip lays them out (docs/packages.md#debug-packages).
type debSet struct {
	t   *testing.T
	dir string
}

func (s debSet) run(name string, args ...string) string {
	s.t.Helper()
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		s.t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// buildID is lib's GNU build-id, as readelf prints it.
func (s debSet) buildID(lib string) string {
	s.t.Helper()
	for _, l := range strings.Split(s.run("readelf", "-n", lib), "\n") {
		if f := strings.Fields(l); len(f) == 3 && f[0] == "Build" && f[1] == "ID:" {
			return f[2]
		}
	}
	s.t.Fatalf("%s has no build-id", lib)
	return ""
}

// split writes lib stripped into main/usr/lib/as, with a .gnu_debuglink
// as dh_strip leaves, and its debug file into dbg's build-id tree (the
// debug file of debugOf, when that is another build: the planted
// mismatch). It returns lib's build-id.
func (s debSet) split(lib, debugOf, as, main, dbg string) string {
	s.t.Helper()
	id := s.buildID(lib)
	debug := filepath.Join(dbg, "usr", "lib", "debug", ".build-id", id[:2], id[2:]+".debug")
	for _, d := range []string{filepath.Dir(debug), filepath.Join(main, "usr", "lib")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			s.t.Fatal(err)
		}
	}
	s.run("objcopy", "--only-keep-debug", debugOf, debug)
	s.run("objcopy", "--strip-debug", "--add-gnu-debuglink="+debug, lib, filepath.Join(main, "usr", "lib", as))
	return id
}

// deb packs root as NAME_2.31.24_amd64.deb in s.dir; root is left as it
// was (its DEBIAN directory removed again).
func (s debSet) deb(root, name string) string {
	s.t.Helper()
	if err := os.MkdirAll(filepath.Join(root, "DEBIAN"), 0o755); err != nil {
		s.t.Fatal(err)
	}
	control := fmt.Sprintf("Package: %s\nVersion: 2.31.24\nArchitecture: amd64\nMaintainer: nrtabi tests <t@example.invalid>\nDescription: nrtabi test package\n", name)
	if err := os.WriteFile(filepath.Join(root, "DEBIAN", "control"), []byte(control), 0o644); err != nil {
		s.t.Fatal(err)
	}
	out := filepath.Join(s.dir, name+"_2.31.24_amd64.deb")
	s.run("dpkg-deb", "-Zxz", "--root-owner-group", "-b", root, out)
	if err := os.RemoveAll(filepath.Join(root, "DEBIAN")); err != nil {
		s.t.Fatal(err)
	}
	return out
}

// pair packs lib as NAME.deb and its debug file as NAME-dbgsym.deb.
func (s debSet) pair(lib, debugOf, as, name string) (pkg, dbgsym string) {
	s.t.Helper()
	main, dbg := filepath.Join(s.dir, name+".root"), filepath.Join(s.dir, name+"-dbgsym.root")
	s.split(lib, debugOf, as, main, dbg)
	return s.deb(main, name), s.deb(dbg, name+"-dbgsym")
}

// compatJSON runs nrtabi compat --format json on args: its report and exit.
func compatJSON(t *testing.T, args ...string) (map[string]any, int, string) {
	t.Helper()
	cmd := exec.Command(checkerPath(), append([]string{"compat", "--format", "json"}, args...)...)
	cmd.Env = append(os.Environ(), "DEBUGINFOD_URLS=")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("nrtabi compat: %v", err)
	}
	var doc map[string]any
	if jerr := json.Unmarshal(out, &doc); jerr != nil {
		t.Fatalf("nrtabi compat %s: exit %d, not JSON (%v)\n%s%s", strings.Join(args, " "), code, jerr, out, stderr.String())
	}
	return doc, code, string(out) + stderr.String()
}

// compatMatrixJSON runs nrtabi compat --matrix --format json on args.
func compatMatrixJSON(t *testing.T, args ...string) (struct {
	Cells []struct{ Libnrt, Libnccom, Verdict string }
}, int, string) {
	t.Helper()
	var m struct {
		Cells []struct{ Libnrt, Libnccom, Verdict string }
	}
	cmd := exec.Command(checkerPath(), append([]string{"compat", "--matrix", "--format", "json"}, args...)...)
	cmd.Env = append(os.Environ(), "DEBUGINFOD_URLS=")
	out, err := cmd.CombinedOutput()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	if code == 0 {
		if err := json.Unmarshal(out, &m); err != nil {
			t.Fatalf("compat --matrix: not JSON (%v)\n%s", err, out)
		}
	}
	return m, code, string(out)
}

// TestCompatOnReferencePackages holds compat to the packages a user
// installs (docs/nrtabi-compat.md#packages): the reference libnrt.so.1 and
// libnccom.so.2, each stripped in its .deb with its DWARF in a -dbgsym
// .deb. With both debug packages the pair loads, every layout seen; a
// libnccom package whose library reports the wrong compatibility id is
// refused at the gate by id; without the debug packages the layout verdict
// is unknown, naming what was not seen, and never "loads" with exit 0; a
// debug package built from another build (its build-id differs from the
// library's) is not taken for the library's DWARF. Cost: objcopy and
// dpkg-deb of three libraries (~3 s), five compat runs.
func TestCompatOnReferencePackages(t *testing.T) {
	requireWorld(t)
	for _, tool := range []string{"objcopy", "dpkg-deb", "readelf"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("skipping: %s not found (.ci/run installs binutils and dpkg)", tool)
		}
	}
	s := debSet{t, t.TempDir()}
	nrt := filepath.Join(libnrtDir(), builder.LibnrtFile)
	nccom := filepath.Join(refLibDir("ref"), builder.LibnccomFile)
	bad := stubPath(tree.StubIncompatible())
	nrtDeb, nrtDbg := s.pair(nrt, nrt, builder.LibnrtFile, "libnrt1")
	nccomDeb, nccomDbg := s.pair(nccom, nccom, builder.LibnccomFile, "libnccom2")
	badDeb, badDbg := s.pair(bad, bad, builder.LibnccomFile, "libnccom2-compat")
	// The planted fault: the skewed build's DWARF filed under the
	// reference library's build-id.
	_, wrongDbg := s.pair(nccom, filepath.Join(refLibDir("skew"), builder.LibnccomFile), builder.LibnccomFile, "libnccom2-wrongdbg")

	start := time.Now()
	doc, code, text := compatJSON(t, nrtDeb, nccomDeb, "--with", nrtDbg, "--with", nccomDbg)
	t.Logf("compat on the .deb pair with dbgsym: %v", time.Since(start))
	// A shared struct one side's DWARF does not describe (libnrt passes
	// ncclUniqueId as 128 opaque bytes) is not compared, and says so: the
	// pair loads, with exit 4 for what was not seen.
	unseenOK := code == 0
	if u, _ := doc["unseen"].([]any); code == 4 && len(u) > 0 {
		unseenOK = true
		for _, e := range u {
			if s, _ := e.(string); !strings.Contains(s, "in one side's DWARF only") {
				unseenOK = false
			}
		}
	}
	if doc["verdict"] != "loads" || doc["layout"] != "same" || !unseenOK {
		t.Errorf("the reference .deb pair with its -dbgsym packages: verdict %v, layout %v, exit %d; want loads, layout same, nothing unseen but structs one side does not describe\n%s", doc["verdict"], doc["layout"], code, text)
	}

	doc, code, text = compatJSON(t, nrtDeb, badDeb, "--with", nrtDbg, "--with", badDbg)
	if doc["verdict"] != "compat-gate" || code != 8 || !strings.Contains(text, fmt.Sprintf("reports compatibility id %d", tree.WrongCompat())) {
		t.Errorf("a libnccom package reporting compatibility id %d: verdict %v, exit %d; want compat-gate naming the id, exit 8\n%s", tree.WrongCompat(), doc["verdict"], code, text)
	}

	doc, code, text = compatJSON(t, nrtDeb, nccomDeb)
	if doc["layout"] != "unknown" || code != 4 || !strings.Contains(text, "--with (a -dbgsym .deb") {
		t.Errorf("the stripped pair without debug packages: verdict %v, layout %v, exit %d; want the layout unknown, exit 4, and the fix naming the -dbgsym package\n%s", doc["verdict"], doc["layout"], code, text)
	}
	for _, side := range []string{"libnrt has no DWARF", "libnccom has no DWARF"} {
		if !strings.Contains(text, side) {
			t.Errorf("the stripped pair: the report does not say %q\n%s", side, text)
		}
	}

	doc, code, text = compatJSON(t, nrtDeb, nccomDeb, "--with", nrtDbg, "--with", wrongDbg)
	if doc["layout"] == "same" || code == 0 || !strings.Contains(text, "build-id") {
		t.Errorf("a -dbgsym package of another build: verdict %v, layout %v, exit %d; want its DWARF refused by build-id, not used\n%s", doc["verdict"], doc["layout"], code, text)
	}
	t.Logf("a -dbgsym package of another build: %v", doc["unseen"])

	// The matrix over what is installed: two directories, each one set's
	// libraries (the reference pair; the reference libnrt beside the
	// libnccom reporting id 88), with the debug packages beside them.
	setA, setB := filepath.Join(s.dir, "setA"), filepath.Join(s.dir, "setB")
	for dst, roots := range map[string][]string{setA: {"libnrt1.root", "libnccom2.root"}, setB: {"libnrt1.root", "libnccom2-compat.root"}} {
		for _, r := range roots {
			s.run("cp", "-a", filepath.Join(s.dir, r, "usr"), dst+"/")
		}
	}
	mdoc, code, text := compatMatrixJSON(t, setA, setB, "--with", nrtDbg, "--with", nccomDbg, "--with", badDbg)
	want := map[[2]string]string{{setA, setA}: "loads", {setA, setB}: "compat-gate", {setB, setA}: "loads", {setB, setB}: "compat-gate"}
	if code != 0 || len(mdoc.Cells) != len(want) {
		t.Fatalf("compat --matrix over two sets: exit %d, %d cells\n%s", code, len(mdoc.Cells), text)
	}
	for _, c := range mdoc.Cells {
		if w := want[[2]string{c.Libnrt, c.Libnccom}]; c.Verdict != w {
			t.Errorf("compat --matrix: libnrt of %s with libnccom of %s is %s, want %s\n%s", c.Libnrt, c.Libnccom, c.Verdict, w, text)
		}
	}

	// The same pair as .rpm packages: one package holding both libraries
	// (each position takes its own file name from it) and its -debuginfo.
	if _, err := exec.LookPath("rpmbuild"); err != nil {
		t.Log("rpmbuild not found: the .rpm half is not run (.ci/run installs rpm)")
		return
	}
	var roots []string
	for _, r := range []string{"libnrt1.root", "libnccom2.root", "libnrt1-dbgsym.root", "libnccom2-dbgsym.root"} {
		roots = append(roots, filepath.Join(s.dir, r))
	}
	rpm, rpmDbg := s.rpms([]string{"/usr/lib/" + builder.LibnrtFile, "/usr/lib/" + builder.LibnccomFile}, roots...)
	doc, code, text = compatJSON(t, rpm, rpm, "--with", rpmDbg)
	if doc["verdict"] != "loads" || doc["layout"] != "same" || code == 8 {
		t.Errorf("the reference .rpm with its -debuginfo: verdict %v, layout %v, exit %d; want loads, layout same\n%s", doc["verdict"], doc["layout"], code, text)
	}
	doc, code, text = compatJSON(t, rpm, rpm)
	if doc["layout"] != "unknown" || code != 4 {
		t.Errorf("the reference .rpm without its -debuginfo: verdict %v, layout %v, exit %d; want the layout unknown, exit 4\n%s", doc["verdict"], doc["layout"], code, text)
	}
}

// rpms builds libnrt.rpm holding files and libnrt-debuginfo.rpm holding
// /usr/lib/debug, in s.dir, from the trees under roots, with rpmbuild's
// own stripping and debug extraction turned off: the files are already
// split.
func (s debSet) rpms(files []string, roots ...string) (main, debug string) {
	s.t.Helper()
	top := s.t.TempDir()
	var cp []string
	for _, r := range roots {
		cp = append(cp, "cp -a "+r+"/. %{buildroot}/")
	}
	spec := "Name: libnrt\nVersion: 2.31.24\nRelease: 1\nSummary: nrtabi test package\nLicense: none\n" +
		"%define debug_package %{nil}\n%define __strip /bin/true\n%define __os_install_post %{nil}\n%define _build_id_links none\n" +
		"%description\nnrtabi test package\n%package debuginfo\nSummary: its debug info\n%description debuginfo\nits debug info\n" +
		"%install\nmkdir -p %{buildroot}\n" + strings.Join(cp, "\n") + "\n" +
		"%files\n" + strings.Join(files, "\n") + "\n%files debuginfo\n/usr/lib/debug\n"
	if err := os.WriteFile(filepath.Join(top, "libnrt.spec"), []byte(spec), 0o644); err != nil {
		s.t.Fatal(err)
	}
	s.run("rpmbuild", "-bb", "--quiet", "--define", "_topdir "+top, "--define", "_binary_payload w19.zstdio",
		"--define", "_rpmdir "+s.dir, "--define", "_build_name_fmt %%{NAME}.rpm", "--target", "x86_64", filepath.Join(top, "libnrt.spec"))
	return filepath.Join(s.dir, "libnrt.rpm"), filepath.Join(s.dir, "libnrt-debuginfo.rpm")
}
