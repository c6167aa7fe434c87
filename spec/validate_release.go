package spec

import (
	"fmt"
	"strconv"
	"strings"
)

// Bounds of a release version (docs/spec-format.md#release-identity): three
// or four dotted decimal parts, as nrt_version_t's rt_major .. rt_maintenance
// and the collectives version string the probe parses hold them, each part
// small enough for any of those fields.
const (
	versionMinParts = 3
	versionMaxParts = 4
	versionPartMax  = 999_999_999
	versionMaxLen   = versionMaxParts*9 + versionMaxParts - 1
)

// VersionProblem says why v is not a release version ("" when it is one):
// major.minor.patch or major.minor.patch.maintenance, each part a decimal
// number without a sign or a leading zero, at most 999999999.
func VersionProblem(v string) string {
	if len(v) > versionMaxLen {
		return fmt.Sprintf("it is %d bytes long; a version is at most %d", len(v), versionMaxLen)
	}
	parts := strings.Split(v, ".")
	if len(parts) < versionMinParts || len(parts) > versionMaxParts {
		return fmt.Sprintf("it has %d dotted parts; write major.minor.patch or major.minor.patch.maintenance", len(parts))
	}
	for i, p := range parts {
		if p == "" {
			return fmt.Sprintf("part %d is empty", i+1)
		}
		for _, r := range p {
			if r < '0' || r > '9' {
				return fmt.Sprintf("part %d is %s, not a decimal number", i+1, quoteName(p))
			}
		}
		if len(p) > 1 && p[0] == '0' {
			return fmt.Sprintf("part %d (%s) has a leading zero", i+1, p)
		}
		if n, err := strconv.ParseUint(p, 10, 64); err != nil || n > versionPartMax {
			return fmt.Sprintf("part %d (%s) is above %d", i+1, p, versionPartMax)
		}
	}
	return ""
}

// ParseVersion splits a version VersionProblem accepts into its parts
// (major, minor, patch, maintenance; maintenance 0 when not written).
func ParseVersion(v string) ([4]uint64, error) {
	var out [4]uint64
	if p := VersionProblem(v); p != "" {
		return out, fmt.Errorf("version %s: %s", quoteName(v), p)
	}
	for i, p := range strings.Split(v, ".") {
		out[i], _ = strconv.ParseUint(p, 10, 64)
	}
	return out, nil
}

// releaseVersions holds runtime_version and collectives_version to the
// version grammar; both are optional.
func (c *checker) releaseVersions() {
	r := &c.s.Release
	for _, kv := range []struct{ key, v string }{{"runtime_version", r.RuntimeVersion}, {"collectives_version", r.CollectivesVersion}} {
		if kv.v == "" {
			continue
		}
		if p := VersionProblem(kv.v); p != "" {
			c.at(&r.Fact, kv.key, "release-version", "[release] %s = %s: %s (it is the version the library reports, never derived from the release name)", kv.key, quoteName(kv.v), p)
		}
	}
}
