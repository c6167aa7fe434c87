package spec

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestSystemNamesCoverTheIncludes: the system headers the generated C
// includes are those the name lists of csystem.go were read from; a
// template that includes another header must have the lists re-read.
func TestSystemNamesCoverTheIncludes(t *testing.T) {
	read := map[string]bool{}
	for _, h := range []string{"errno.h", "pthread.h", "stdio.h", "stdlib.h", "string.h", "time.h", "stdbool.h", "stddef.h", "stdint.h", "sched.h", "sys/types.h"} {
		read[h] = true
	}
	tmpls, err := filepath.Glob("../gen/templates/*.tmpl")
	if err != nil || len(tmpls) == 0 {
		t.Fatalf("no templates: %v", err)
	}
	inc := regexp.MustCompile(`(?m)^#include <([^>]+)>`)
	for _, p := range tmpls {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range inc.FindAllStringSubmatch(string(data), -1) {
			if !read[m[1]] {
				t.Errorf("%s includes <%s>, whose names csystem.go does not list", filepath.Base(p), m[1])
			}
		}
	}
	for _, n := range []string{"EINVAL", "UINT32_MAX", "stdin"} {
		if !cSystemMacros()[n] || CNameProblem(n) == "" {
			t.Errorf("%s is not refused as a system macro", n)
		}
	}
	for _, n := range []string{"exit", "FILE", "timespec"} {
		if p := CNameProblem(n); p == "" {
			t.Errorf("%s is not refused", n)
		}
	}
	if p := CMemberProblem("tv_sec"); p != "" && !strings.Contains(p, "already uses") {
		t.Errorf("a system member name is refused as a member: %s", p)
	}
}
