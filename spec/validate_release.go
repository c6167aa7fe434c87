package spec

import (
	"fmt"
	"reflect"
	"slices"
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

// carried holds a row's carried-over marks to the derivation chain: the
// release a fact is carried from is one this release derives from, and a
// list of carried keys says from which (docs/spec-format.md#provenance-and-confidence).
func (c *checker) carried(f *Fact, what string) {
	switch {
	case f.CarriedFrom != "" && len(c.s.ancestors) == 0:
		c.at(f, "carried_from", "carried", "%s: carried_from = %s, but the release derives from nothing; drop carried_from or add derived_from = %s to [release]",
			what, quoteName(f.CarriedFrom), quoteName(f.CarriedFrom))
	case f.CarriedFrom != "" && !slices.Contains(c.s.ancestors, f.CarriedFrom):
		c.at(f, "carried_from", "carried", "%s: carried_from = %s names no release this one derives from (%s); name the release the facts were carried from",
			what, quoteName(f.CarriedFrom), strings.Join(c.s.ancestors, " <- "))
	case f.CarriedFrom == "" && len(f.Carried) > 0:
		c.at(f, "carried", "carried", "%s: carried = %s without carried_from; name the release the keys were carried from (derived_from = %s)",
			what, quoteList(f.Carried), quoteName(c.s.Release.DerivedFrom))
	}
	// A misspelt key would mark nothing carried and leave the fact
	// claiming the release's own provenance: refused like an unknown key.
	if keys := c.rowKeys; keys != nil {
		for _, k := range f.Carried {
			if !keys[k] {
				c.at(f, "carried", "carried", "%s: carried lists %s, which is no key of the row; name keys it holds (or \"signature\" for returns and params)", what, quoteName(k))
			}
		}
	}
}

// rowKeys are the data keys a kind's rows (and the tables nested in them)
// may hold, from the model's toml tags: what carried may list. A row that
// embeds a Signature may also list "signature" (returns and params).
func rowKeys(k kind) map[string]bool {
	keys := map[string]bool{}
	seen := map[reflect.Type]bool{}
	var walk func(t reflect.Type)
	walk = func(t reflect.Type) {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct || seen[t] || t == reflect.TypeOf(Fact{}) {
			return
		}
		seen[t] = true
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			tag := strings.Split(f.Tag.Get("toml"), ",")[0]
			switch {
			case f.Anonymous && f.Type == reflect.TypeOf(Signature{}):
				keys["signature"] = true
				walk(f.Type)
			case f.Anonymous:
				walk(f.Type)
			case tag == "" || tag == "-":
			default:
				keys[tag] = true
				walk(f.Type)
			}
		}
	}
	walk(k.field().Type)
	return keys
}
