package gen

import (
	"bytes"
	"context"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nrtabi/nrtabi/spec"
)

func mustType(t *testing.T, s *spec.Spec, expr string) *spec.Type {
	t.Helper()
	ty, err := spec.ParseType(expr)
	if err != nil {
		t.Fatal(err)
	}
	if ty.Kind == spec.KindStruct {
		if st := s.StructByName(ty.Name); st != nil {
			ty.Struct = st
		} else {
			ty.Kind, ty.Enum = spec.KindEnum, s.EnumByName(ty.Name)
		}
	}
	return ty
}

// TestConversion is the lossless rule of docs/generator.md#stable-fields.
func TestConversion(t *testing.T) {
	s := mustLoad(t, "2.31.24")
	for _, tc := range []struct {
		from, to string
		rng      []int64
		same, ok bool
	}{
		{"u32", "u32", nil, true, true},
		{"u32", "unsigned", nil, true, true}, // one Go type
		{"u32", "u64", nil, false, true},     // widening
		{"u32", "i64", nil, false, true},     // unsigned to wider signed
		{"u32", "int", nil, false, false},    // sign change, same size
		{"u32", "i8", nil, false, false},     // narrowing
		{"u32", "i8", []int64{0, 63}, false, true},
		{"u32", "i8", []int64{0, 200}, false, false}, // the range does not fit i8
		{"i64", "u64", []int64{-1, 5}, false, false}, // nor u64
		{"i64", "i8", []int64{-9, -2}, false, true},  // a negative domain
		{"i64", "u8", []int64{-9, -2}, false, false},
		{"int", "nec_pod_type_t", nil, false, true}, // an enum is C's int
		{"bool", "u8", nil, false, false},
		{"void*", "char*", nil, true, true}, // both uintptr
		{"u32", "u32[2]", nil, false, false},
		{"enc_nccl_comm_node_t", "enc_nccl_comm_node", nil, true, true}, // typedef and tag: one struct
		{"enc_nccl_comm_node_t", "enc_comm", nil, false, false},
	} {
		same, ok := conversion(mustType(t, s, tc.from), mustType(t, s, tc.to), tc.rng)
		if same != tc.same || ok != tc.ok {
			t.Errorf("%s -> %s %v: same %v lossless %v, want %v %v", tc.from, tc.to, tc.rng, same, ok, tc.same, tc.ok)
		}
	}
}

// plantRelease writes, under root/spec/name, a release derived from 2.31.24
// that restates the structs edit changes, and loads it.
func plantRelease(t *testing.T, root, name string, edit map[string]func([]spec.Field) []spec.Field) *spec.Spec {
	t.Helper()
	base := mustLoad(t, "2.31.24")
	var b bytes.Buffer
	w := &spec.Writer{W: &b}
	for _, sn := range []string{"enc_nccl_comm_node", "enc_comm", "enc_glb_comm"} {
		if edit[sn] == nil {
			continue
		}
		st := *base.StructByName(sn)
		st.Fields = edit[sn](slices.Clone(st.Fields))
		w.Struct(&st)
	}
	dir := filepath.Join(root, "spec", name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	rel := "[release]\nname = \"" + name + "\"\nderived_from = \"2.31.24\"\nconf = \"INFERRED\"\nsource = \"gen test\"\n"
	if err := os.WriteFile(filepath.Join(dir, "release.toml"), []byte(rel), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "structs.toml"), b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := spec.LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func field(fs []spec.Field, name string) *spec.Field {
	for i := range fs {
		if fs[i].Name == name {
			return &fs[i]
		}
	}
	panic("no field " + name)
}

// renamed is the vendor drop's rename: reservation_id is pod_id, with or
// without the was row that says so.
func renamed(was bool) func([]spec.Field) []spec.Field {
	return func(fs []spec.Field) []spec.Field {
		f := field(fs, "reservation_id")
		f.Name = "pod_id"
		if was {
			f.Was = "reservation_id"
		}
		return fs
	}
}

// streamAs re-types enc_nccl_comm_node.stream_id; a u64 takes the padding
// before local_participants, so the node keeps its 88 bytes.
func streamAs(typ string, rng []int64) func([]spec.Field) []spec.Field {
	return func(fs []spec.Field) []spec.Field {
		f := field(fs, "stream_id")
		f.Type, f.Range = typ, rng
		if typ == "u64" {
			for i, n := range []string{"context_id", "num_local_participants", "num_local_leaders", "my_local_leader"} {
				field(fs, n).Offset = 40 + 4*i
			}
		}
		return fs
	}
}

// commStreamAs re-types enc_comm.stream_id in place.
func commStreamAs(typ string, rng []int64) func([]spec.Field) []spec.Field {
	return func(fs []spec.Field) []spec.Field {
		f := field(fs, "stream_id")
		f.Type, f.Range = typ, rng
		return fs
	}
}

// TestHandUsesRefused plants each change the stable API cannot absorb
// against a use hand-written code makes, and sees generation refuse it in
// one line naming the field, both releases and the row to add.
func TestHandUsesRefused(t *testing.T) {
	base := mustLoad(t, "2.31.24")
	// What runtime/collectives names: the global comm by type, its node
	// through g.m.NcclCommNode.
	mentions := map[string]bool{"EncGlbComm": true}
	uses := handUses{named: map[string]string{"ReservationID": "runtime/collectives/init.go:67", "GetStreamID": "runtime/collectives/pool.go:66",
		"NcclCommNode": "runtime/collectives/pool.go:57"}, mentioned: mentions}
	for _, tc := range []struct {
		name string
		edit map[string]func([]spec.Field) []spec.Field
		uses handUses
		want string // "" when generation goes ahead
	}{
		{"rename with was", map[string]func([]spec.Field) []spec.Field{"enc_glb_comm": renamed(true)}, uses, ""},
		{"rename without was", map[string]func([]spec.Field) []spec.Field{"enc_glb_comm": renamed(false)}, uses,
			`runtime/collectives/init.go:67: names ReservationID, but enc_glb_comm.reservation_id (in 2.31.24) is gone from 9.0.0; either mark it absent there (a [[struct.absent]] row name = "reservation_id", type = "u64" in the struct at `},
		{"rename without was, unused", map[string]func([]spec.Field) []spec.Field{"enc_glb_comm": renamed(false)}, handUses{named: map[string]string{"Size": "runtime/x.go:1"}, mentioned: mentions}, ""},
		// A ReservationID of a hand-written type is no use of the generated one.
		{"rename without was, struct never named", map[string]func([]spec.Field) []spec.Field{"enc_glb_comm": renamed(false)}, handUses{named: uses.named, mentioned: map[string]bool{}}, ""},
		// Reached only through a field of a struct hand-written code names.
		{"narrowed, reached through a field", map[string]func([]spec.Field) []spec.Field{"enc_nccl_comm_node": streamAs("i8", nil)}, handUses{named: map[string]string{"GetStreamID": "runtime/x.go:2", "NcclCommNode": "runtime/x.go:1"}, mentioned: mentions},
			"enc_nccl_comm_node.stream_id: u32 in 2.31.24, i8 in 9.0.0 cannot hold every value"},
		{"narrowed, not reached", map[string]func([]spec.Field) []spec.Field{"enc_nccl_comm_node": streamAs("i8", nil)}, handUses{named: map[string]string{"GetStreamID": "runtime/x.go:2"}, mentioned: mentions}, ""},
		{"widened", map[string]func([]spec.Field) []spec.Field{"enc_nccl_comm_node": streamAs("u64", nil)}, uses, ""},
		{"narrowed", map[string]func([]spec.Field) []spec.Field{"enc_nccl_comm_node": streamAs("i8", nil)}, uses,
			"enc_nccl_comm_node.stream_id: u32 in 2.31.24, i8 in 9.0.0 cannot hold every value; add range = [0, 127] to the field row in "},
		{"narrowed with a range", map[string]func([]spec.Field) []spec.Field{"enc_nccl_comm_node": streamAs("i8", []int64{0, 63})}, uses, ""},
		// The vendor drop: enc_comm.stream_id u32 -> int, lossless
		// with 2.31.24's range [0, 3] (carried by release new), refused without.
		{"sign change with the parent's range", map[string]func([]spec.Field) []spec.Field{"enc_comm": commStreamAs("int", []int64{0, 3})}, handUses{named: map[string]string{"SetStreamID": "runtime/collectives/ncclinit.go:44"}, mentioned: map[string]bool{"EncComm": true}}, ""},
		{"sign change without a range", map[string]func([]spec.Field) []spec.Field{"enc_comm": commStreamAs("int", nil)}, handUses{named: map[string]string{"SetStreamID": "runtime/collectives/ncclinit.go:44"}, mentioned: map[string]bool{"EncComm": true}},
			"enc_comm.stream_id: u32 in 2.31.24, int in 9.0.0 cannot hold every value; add range = [0, 2147483647] to the field row in "},
		// A vendor header spells the member's type by its tag, the spec by its typedef.
		{"struct type by its tag", map[string]func([]spec.Field) []spec.Field{"enc_glb_comm": func(fs []spec.Field) []spec.Field {
			field(fs, "nccl_comm_node").Type = "enc_nccl_comm_node"
			return fs
		}}, uses, ""},
		{"widened, named directly", map[string]func([]spec.Field) []spec.Field{"enc_nccl_comm_node": streamAs("u64", nil)}, handUses{named: map[string]string{"StreamID": "runtime/x.go:3"}, mentioned: map[string]bool{"EncNcclCommNode": true}},
			"enc_nccl_comm_node.stream_id: u32 in 2.31.24, u64 in 9.0.0, and runtime/x.go:3 names StreamID directly; use GetStreamID/SetStreamID there"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := plantRelease(t, t.TempDir(), "9.0.0", tc.edit)
			err := checkHandUses([]*spec.Spec{base, s}, tc.uses)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("got %v\nwant one line starting %q", err, tc.want)
			}
			if strings.HasSuffix(tc.want, " in ") && !strings.Contains(err.Error(), filepath.Join("9.0.0", "structs.toml")+":") {
				t.Errorf("the error does not name the spec row: %v", err)
			}
		})
	}
}

// TestScanHandUses: the scan finds what runtime/ names today, and a stale
// use planted in a hand-written file, but not what generated files name.
func TestScanHandUses(t *testing.T) {
	root, err := FindRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	uses, err := scanHandUses(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"ReservationID", "SetStreamID", "GetStreamID", "GDeviceID"} {
		if uses.named[n] == "" {
			t.Errorf("the scan misses %s", n)
		}
	}
	if !uses.mentioned["EncGlbComm"] {
		t.Error("the scan misses abi.EncGlbComm")
	}
	tmp := t.TempDir()
	for p, body := range map[string]string{
		"runtime/x/x.go":    "package x\n\nfunc f(m *T) { _ = m.PodSzStale }\n",
		"cmd/y/y.go":        "package y\n\nvar v = T{KeyStale: 1}\n",
		"runtime/x/zgen.go": "// Code generated by nrtabi gen. DO NOT EDIT.\n\npackage x\n\nfunc g(m *T) { _ = m.GeneratedOnly }\n",
	} {
		os.MkdirAll(filepath.Join(tmp, filepath.Dir(p)), 0o755)
		os.WriteFile(filepath.Join(tmp, p), []byte(body), 0o644)
	}
	uses, err = scanHandUses(tmp)
	if err != nil {
		t.Fatal(err)
	}
	if uses.named["PodSzStale"] != "runtime/x/x.go:3" || uses.named["KeyStale"] != "cmd/y/y.go:3" || uses.named["GeneratedOnly"] != "" || !uses.mentioned["T"] {
		t.Errorf("scan of planted files: %v", uses)
	}
}

// TestRuntimeCompilesAcrossReleases holds the runtime to stable field names
// across releases (docs/spec-format.md#stable-field-names,
// docs/adding-a-release.md#renamed-and-re-typed-fields), run as a user runs it: in a copy of the module, a release with reservation_id
// renamed pod_id (a was row) and enc_nccl_comm_node.stream_id re-typed
// u32 -> u64 is generated by `go run ./cmd/nrtabi gen --all`, and
// runtime/collectives and runtime/nrt vet unchanged under its build tag. A
// second release with stream_id as i8 is refused by the same command in one
// line, until a range row makes it lossless.
func TestRuntimeCompilesAcrossReleases(t *testing.T) {
	if testing.Short() {
		t.Skip("skipping: copies the module, builds nrtabi and vets runtime/ (-short)")
	}
	needCC(t)
	root, err := FindRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	copyModule(t, root, tmp)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	run := func(args ...string) (string, error) {
		cmd := exec.CommandContext(ctx, "go", args...)
		cmd.Dir = tmp
		cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off")
		if args[0] == "run" {
			// nrtabi is pure Go (TestPureGoWithoutTags): built without cgo,
			// its standard library is the one that test compiled, not a
			// second cgo-enabled set on an empty cache.
			cmd.Env = append(cmd.Env, "CGO_ENABLED=0")
		}
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	// Each `go run` rebuilds nrtabi (the spec is embedded), so the three
	// states share two builds: first u64 and the lossy i8 side by side,
	// refused on the i8 alone; then the i8 with its range, when both
	// releases generate and vet.
	plant := func(name, stream string, rng []int64) {
		plantRelease(t, tmp, name, map[string]func([]spec.Field) []spec.Field{
			"enc_glb_comm": renamed(true), "enc_nccl_comm_node": streamAs(stream, rng)})
	}
	plant("9.1.0", "u64", nil)
	plant("9.2.0", "i8", nil)
	refused := "enc_nccl_comm_node.stream_id: u32 in 2.31.24, i8 in 9.2.0 cannot hold every value; add range = [0, 127] to the field row in "
	if out, err := run("run", "./cmd/nrtabi", "gen", "--all"); err == nil || !strings.Contains(out, refused) {
		t.Fatalf("9.2.0 (stream_id i8): gen --all gave %v\n%s\nwant the line %q", err, out, refused)
	}
	plant("9.2.0", "i8", []int64{0, 63})
	if out, err := run("run", "./cmd/nrtabi", "gen", "--all"); err != nil {
		t.Fatalf("9.1.0 (stream_id u64), 9.2.0 (stream_id i8 in [0, 63]): gen --all: %v\n%s", err, out)
	}
	for _, name := range []string{"9.1.0", "9.2.0"} {
		tag := releaseTag(t, tmp, name)
		if out, err := run("vet", "-tags", tag, "./runtime/collectives", "./runtime/nrt"); err != nil {
			t.Fatalf("%s: runtime/ does not build against it: %v\n%s", name, err, out)
		}
		// The vendor spelling and the stable one both name the field in C.
		h, err := os.ReadFile(filepath.Join(tmp, "generated", name, "c", HeaderName))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(h, []byte("union { uint64_t pod_id; uint64_t reservation_id; };")) {
			t.Errorf("%s: the header has no stable spelling of pod_id", name)
		}
	}
}

// releaseTag is the build tag that selects release in the generated tree
// under root, read from the release's zrelease file in runtime/collectives.
func releaseTag(t *testing.T, root, release string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "runtime", "collectives", "zrelease_"+releaseIdent(release)+".go"))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if !strings.HasPrefix(l, "//go:build ") {
			continue
		}
		for _, tok := range strings.FieldsFunc(l[len("//go:build "):], func(r rune) bool {
			return !(r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r == '!')
		}) {
			if !strings.HasPrefix(tok, "!") && strings.HasSuffix(tok, releaseIdent(release)) {
				return tok
			}
		}
	}
	t.Fatalf("no build tag for %s in its zrelease file", release)
	return ""
}

// copyModule copies the module's files (no .git, no build output) to dst.
func copyModule(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if e.IsDir() {
			if rel == ".git" || rel == "build" || strings.HasPrefix(e.Name(), ".") && rel != "." {
				return filepath.SkipDir
			}
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		if !e.Type().IsRegular() {
			return nil
		}
		in, err := os.Open(p)
		if err != nil {
			return err
		}
		defer in.Close()
		out, err := os.Create(filepath.Join(dst, rel))
		if err != nil {
			return err
		}
		if _, err := io.Copy(out, in); err != nil {
			out.Close()
			return err
		}
		return out.Close()
	})
	if err != nil {
		t.Fatal(err)
	}
}

// BenchmarkScanHandUses is what the scan adds to `nrtabi gen --all`.
func BenchmarkScanHandUses(b *testing.B) {
	root, err := FindRoot(".")
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := scanHandUses(root); err != nil {
			b.Fatal(err)
		}
	}
}
