// Package specsame holds the check that a loaded embedded release still
// equals its TOML: the compiled releases (spec/compiled) are static data
// that every compiled.Load in a process shares, so code that takes a loaded
// release must not write into it.
package specsame

import (
	"fmt"
	"os"
	"reflect"

	"github.com/nrtabi/nrtabi/spec"
	"github.com/nrtabi/nrtabi/spec/compiled"
)

// AsTOML reports where compiled.Load(release) differs from the release read
// afresh from its TOML (spec.Load), comparing every exported field, bound
// types included. An embedded release loads from compiled static rows that
// every compiled.Load in the process shares: a test runs the code that takes
// a loaded release, then this, to show that the code wrote nothing into them.
func AsTOML(release string) error {
	got, err := compiled.Load(release)
	if err != nil {
		return err
	}
	want, err := spec.Load(release)
	if err != nil {
		return err
	}
	c := comparer{seen: map[[2]uintptr]bool{}}
	if path, a, b := c.diff(reflect.ValueOf(got).Elem(), reflect.ValueOf(want).Elem(), "Spec"); path != "" {
		return fmt.Errorf("release %s as loaded differs from its TOML at %s: %s, TOML %s", release, path, a, b)
	}
	return nil
}

// AfterTests is a TestMain's exit code once m.Run returned code: the
// package's tests all ran on the embedded releases every spec.Load shares,
// and a test that wrote into one fails the package here, naming where.
func AfterTests(code int) int {
	for _, r := range spec.Releases() {
		if err := AsTOML(r); err != nil {
			fmt.Fprintf(os.Stderr, "FAIL: a test wrote into a shared compiled release (load with spec.Load to change it): %v\n", err)
			code = 1
		}
	}
	return code
}

type comparer struct {
	seen map[[2]uintptr]bool // pointer pairs already compared (structs may refer to each other)
}

// diff names the first path where a and b differ in an exported field.
func (c comparer) diff(a, b reflect.Value, path string) (string, string, string) {
	switch a.Kind() {
	case reflect.Pointer, reflect.Interface:
		if a.IsNil() || b.IsNil() {
			if a.IsNil() != b.IsNil() {
				return path, fmt.Sprintf("nil %v", a.IsNil()), fmt.Sprintf("nil %v", b.IsNil())
			}
			return "", "", ""
		}
		if a.Kind() == reflect.Pointer {
			k := [2]uintptr{a.Pointer(), b.Pointer()}
			if c.seen[k] {
				return "", "", ""
			}
			c.seen[k] = true
		}
		return c.diff(a.Elem(), b.Elem(), path)
	case reflect.Struct:
		for i := 0; i < a.NumField(); i++ {
			if !a.Type().Field(i).IsExported() {
				continue
			}
			if p, x, y := c.diff(a.Field(i), b.Field(i), path+"."+a.Type().Field(i).Name); p != "" {
				return p, x, y
			}
		}
	case reflect.Slice:
		if a.IsNil() != b.IsNil() || a.Len() != b.Len() {
			return path, fmt.Sprintf("len %d", a.Len()), fmt.Sprintf("len %d", b.Len())
		}
		for i := 0; i < a.Len(); i++ {
			if p, x, y := c.diff(a.Index(i), b.Index(i), fmt.Sprintf("%s[%d]", path, i)); p != "" {
				return p, x, y
			}
		}
	default:
		if !reflect.DeepEqual(a.Interface(), b.Interface()) {
			return path, fmt.Sprint(a.Interface()), fmt.Sprint(b.Interface())
		}
	}
	return "", "", ""
}
