package nrt

import (
	"bytes"
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/nrtabi/nrtabi/generated/abi"
)

// olderTag builds the package for 2.20.0-synthetic, the embedded release
// that lacks arch_name, device_revision and context_id.
const olderTag = "nrtabi_release_2_20_0_synthetic"

// TestInstanceInfoOnOlderRelease runs TestInstanceInfoPresence and
// TestDeviceABI in this package built for the release that lacks the fields,
// whatever release this run is built for: the callback on the vendor's 8
// bytes is part of every test run, not only of a run with that tag.
func TestInstanceInfoOnOlderRelease(t *testing.T) {
	if abi.BuildTag == olderTag {
		t.Skip("skipping: this run is built for the older release; TestInstanceInfoPresence runs here directly")
	}
	if testing.Short() {
		t.Skip("skipping: builds this package for another release (-short)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "test", "-count=1", "-v", "-tags", olderTag, "-run", "^(TestInstanceInfoPresence|TestDeviceABI)$", ".")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go test -tags %s: %v\n%s", olderTag, err, out)
	}
	for _, want := range []string{"release 2.20.0-synthetic: nrt_instance_info_t 8 bytes, arch_name present false, device_revision present false",
		"--- PASS: TestInstanceInfoPresence", "--- PASS: TestDeviceABI"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the run for %s does not say %q:\n%s", olderTag, want, out)
		}
	}
}

// TestInstanceInfoPresence calls the C nrt_get_instance_info with the
// vendor's size of nrt_instance_info_t in the release the test is built
// for. Where the release has arch_name and device_revision they carry the
// device layer's values; where it lacks them (2.20.0-synthetic,
// docs/generator.md#absent-fields) the struct is the vendor's 8 bytes, the
// presence accessors say false and give zero values, a setter stores
// nothing, and no byte past the struct is written.
func TestInstanceInfoPresence(t *testing.T) {
	const guard = 16
	buf := bytes.Repeat([]byte{0xa5}, abi.SizeofNRTInstanceInfo+guard)
	if st := instanceInfo(buf[:abi.SizeofNRTInstanceInfo]); st != uint32(statusSuccess) {
		t.Fatalf("nrt_get_instance_info: status %d", st)
	}
	if !bytes.Equal(buf[abi.SizeofNRTInstanceInfo:], bytes.Repeat([]byte{0xa5}, guard)) {
		t.Fatalf("nrt_get_instance_info wrote past the %d bytes of nrt_instance_info_t: % x", abi.SizeofNRTInstanceInfo, buf)
	}
	info := (*InstanceInfo)(unsafe.Pointer(&buf[0]))
	in := Device().Instance()
	if info.Family != in.FamilyID || info.Size != in.Size {
		t.Errorf("family %d size %d, want %d and %d", info.Family, info.Size, in.FamilyID, in.Size)
	}
	arch, archOK := info.GetArchName()
	rev, revOK := info.GetDeviceRevision()
	if archOK != info.HasArchName() || revOK != info.HasDeviceRevision() {
		t.Fatalf("Get and Has disagree: arch %v/%v, revision %v/%v", archOK, info.HasArchName(), revOK, info.HasDeviceRevision())
	}
	if archOK {
		if got := string(bytes.TrimRight(arch[:], "\x00")); got != in.Arch {
			t.Errorf("arch_name %q, want %q", got, in.Arch)
		}
	} else if arch != [len(arch)]byte{} || info.SetArchName([len(arch)]byte{'x'}) {
		t.Errorf("absent arch_name: Get gave %q, or Set stored", arch)
	}
	if revOK {
		if got := string(bytes.TrimRight(rev[:], "\x00")); got != in.Revision {
			t.Errorf("device_revision %q, want %q", got, in.Revision)
		}
	} else if rev != [len(rev)]byte{} || info.SetDeviceRevision([len(rev)]byte{'x'}) {
		t.Errorf("absent device_revision: Get gave %q, or Set stored", rev)
	}
	if !archOK && !revOK {
		// Nothing is invented: the struct ends with size.
		if want := int(unsafe.Offsetof(info.Size) + unsafe.Sizeof(info.Size)); abi.SizeofNRTInstanceInfo != want {
			t.Errorf("nrt_instance_info_t without arch_name and device_revision is %d bytes, want %d", abi.SizeofNRTInstanceInfo, want)
		}
	}
	t.Logf("release %s: nrt_instance_info_t %d bytes, arch_name present %v, device_revision present %v", abi.Release, abi.SizeofNRTInstanceInfo, archOK, revOK)
}
