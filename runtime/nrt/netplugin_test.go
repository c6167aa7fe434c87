package nrt

import (
	"slices"
	"strings"
	"testing"

	"github.com/nrtabi/nrtabi/spec/compiled"
)

// TestNetPluginTablesAreTheSpecs: the tables the soft load asks a plugin
// for are the release's libnccom-net.so objects, newest version first.
func TestNetPluginTablesAreTheSpecs(t *testing.T) {
	s, err := compiled.Load(Release)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, o := range s.Release.LibNCCOMNet.Objects {
		want = append(want, o.Name)
	}
	slices.SortFunc(want, func(a, b string) int { return -strings.Compare(a, b) })
	if !slices.Equal(NetPluginTables, want) {
		t.Errorf("NetPluginTables = %v, the spec's libnccom-net.so objects are %v", NetPluginTables, want)
	}
}
