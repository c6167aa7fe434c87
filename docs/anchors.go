package docs

import (
	"fmt"
	"regexp"
	"strings"
	"unicode"
)

var explicitAnchor = regexp.MustCompile(`<a\s+(?:id|name)="([^"]+)"`)

// Anchors are the anchors of a Markdown page of the manual, as GitHub makes
// them: heading slugs (a repeated slug numbered -1, -2, ...) and explicit
// <a id="..."> (or name=), outside fenced code. The manual's link test and
// the test that code cites only anchors that exist both read them here.
func Anchors(page []byte) map[string]bool {
	anchors := map[string]bool{}
	seen := map[string]int{}
	fence := ""
	for _, line := range strings.Split(string(page), "\n") {
		trim := strings.TrimLeft(line, " ")
		if fence != "" {
			if strings.HasPrefix(trim, fence) {
				fence = ""
			}
			continue
		}
		if strings.HasPrefix(trim, "```") || strings.HasPrefix(trim, "~~~") {
			fence = trim[:3]
			continue
		}
		for _, m := range explicitAnchor.FindAllStringSubmatch(line, -1) {
			anchors[m[1]] = true
		}
		if !strings.HasPrefix(line, "#") {
			continue
		}
		s := slug(strings.TrimLeft(line, "#"))
		if s == "" {
			continue
		}
		if k := seen[s]; k > 0 {
			anchors[fmt.Sprintf("%s-%d", s, k)] = true
		} else {
			anchors[s] = true
		}
		seen[s]++
	}
	return anchors
}

// slug is GitHub's heading anchor: lower case, markup and punctuation
// dropped, spaces as hyphens.
func slug(heading string) string {
	heading = strings.TrimSpace(heading)
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}
