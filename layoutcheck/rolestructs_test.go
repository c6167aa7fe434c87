package layoutcheck

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/nrtabi/nrtabi/internal/cc"
	"github.com/nrtabi/nrtabi/layoutcheck/specmatch"
)

// TestRoleStructs: a library role declares the structs its DWARF must
// describe (those its definers' signatures take); a libnccom whose DWARF
// lacks them has a missing-struct finding per struct, and one that
// describes nec_version_info_t has none for it. Before, the check was
// CLEAN over a libnccom holding no spec struct at all.
func TestRoleStructs(t *testing.T) {
	f := loadFixtures(t)
	if got := RoleStructs(specmatch.RoleLibnccom, f.sp); !slices.Equal(got, []string{"enc_neuron_device_info_t", "nccl_comm_info_t", "nec_version_info_t", "net_dest_addr_t", "net_ops_info_t", "net_src_addr_t"}) {
		t.Errorf("libnccom's structs %q", got)
	}
	if got := RoleStructs(specmatch.RoleLibnrt, f.sp); !slices.Equal(got, []string{"nrt_instance_info_t", "nrt_version_t"}) {
		t.Errorf("libnrt's structs %q", got)
	}
	dir := t.TempDir()
	src := "#include <stdint.h>\nstruct nec_version_info { uint64_t major, minor, patch, maintenance; char git_hash[16]; uint64_t compatibility_version; uint8_t future_fields[]; };\n" +
		"int neuronGetVersionInfo(struct nec_version_info *v) { return v != 0; }\n"
	if err := writeFile(dir, "n.c", src); err != nil {
		t.Fatal(err)
	}
	if err := writeFile(dir, "bare.c", "int neuron_nothing;\n"); err != nil {
		t.Fatal(err)
	}
	soname := f.sp.Release.LibNCCOM.SONAME
	for _, c := range []struct {
		src     string
		missing []string
	}{
		{"bare.c", []string{"enc_neuron_device_info_t", "nccl_comm_info_t", "nec_version_info_t", "net_dest_addr_t", "net_ops_info_t", "net_src_addr_t"}},
		{"n.c", []string{"enc_neuron_device_info_t", "nccl_comm_info_t", "net_dest_addr_t", "net_ops_info_t", "net_src_addr_t"}},
	} {
		lib := filepath.Join(dir, strings.TrimSuffix(c.src, ".c")+".so")
		if err := cc.Shared(dir, filepath.Base(lib), soname, "", []string{c.src}); err != nil {
			t.Fatal(err)
		}
		r, err := Check(context.Background(), []string{lib}, Options{Spec: f.sp})
		if err != nil {
			t.Fatal(err)
		}
		var missing []string
		for _, fd := range r.Findings {
			if fd.Kind == KindMissingStruct {
				missing = append(missing, fd.Struct)
			}
		}
		if !slices.Equal(missing, c.missing) || !strings.HasPrefix(r.Verdict, "INCOMPATIBLE") {
			t.Errorf("%s: missing-struct findings %q, want %q (verdict %s)", c.src, missing, c.missing, r.Verdict)
		}
	}
}
