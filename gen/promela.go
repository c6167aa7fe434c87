package gen

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/nrtabi/nrtabi/spec"
)

// The Promela models of model/*.pml include a header of every number and
// formula they take from a release's spec, zspec_<release>.pml: what the
// model checks is then the spec's protocol, not a copy of it.

// PromelaHeaderName is the generated model header of release.
func PromelaHeaderName(release string) string { return "zspec_" + release + ".pml" }

// pmlMacro is one formula row of the spec as a Promela macro.
type pmlMacro struct {
	name   string   // the macro
	params []string // its parameters, the variables the row may use
	row    string   // the [[constant]] holding the expression
}

var pmlFormulas = []pmlMacro{
	{"tree_parent", []string{"r"}, "ENC_SIG_TREE_PARENT"},
	{"cube_climb_stop", []string{"n", "mask"}, "ENC_UID_CUBE_CLIMB_STOP"},
	{"cube_parent", []string{"r", "mask"}, "ENC_UID_CUBE_PARENT"},
	{"cube_child", []string{"r", "step"}, "ENC_UID_CUBE_CHILD"},
	{"ring_next", []string{"r", "n"}, "BOOTSTRAP_RING_NEXT"},
	{"ring_prev", []string{"r", "n"}, "BOOTSTRAP_RING_PREV"},
	{"ring_steps", []string{"n"}, "BOOTSTRAP_RING_STEPS"},
	{"ring_send_slice", []string{"r", "i", "n"}, "BOOTSTRAP_RING_SEND_SLICE"},
	{"ring_recv_slice", []string{"r", "i", "n"}, "BOOTSTRAP_RING_RECV_SLICE"},
}

// pmlHierFormulas are the hierarchical bootstrap's grouping and ring shapes
// (spec/<release>/bootstrap_hierarchy.toml): l is the ranks per instance, k
// the size of r's instance (the last may be short).
var pmlHierFormulas = []pmlMacro{
	{"hier_dispatch", []string{"n", "l"}, "BOOTSTRAP_HIER_DISPATCH"},
	{"hier_instance", []string{"r", "l"}, "BOOTSTRAP_HIER_INSTANCE"},
	{"hier_local", []string{"r", "l"}, "BOOTSTRAP_HIER_LOCAL"},
	{"hier_ninstances", []string{"n", "l"}, "BOOTSTRAP_HIER_NINSTANCES"},
	{"hier_leader", []string{"r", "l"}, "BOOTSTRAP_HIER_LEADER"},
	{"hier_local_n", []string{"r", "n", "l"}, "BOOTSTRAP_HIER_LOCAL_N"},
	{"hier_intra_next", []string{"r", "l", "k"}, "BOOTSTRAP_HIER_INTRA_NEXT"},
	{"hier_intra_prev", []string{"r", "l", "k"}, "BOOTSTRAP_HIER_INTRA_PREV"},
	{"hier_intra_steps", []string{"k"}, "BOOTSTRAP_HIER_INTRA_STEPS"},
	{"hier_intra_send_slice", []string{"r", "i", "l", "k"}, "BOOTSTRAP_HIER_INTRA_SEND_SLICE"},
	{"hier_intra_recv_slice", []string{"r", "i", "l", "k"}, "BOOTSTRAP_HIER_INTRA_RECV_SLICE"},
	{"hier_inter_next", []string{"r", "n", "l"}, "BOOTSTRAP_HIER_INTER_NEXT"},
	{"hier_inter_prev", []string{"r", "n", "l"}, "BOOTSTRAP_HIER_INTER_PREV"},
	{"hier_inter_steps", []string{"n", "l"}, "BOOTSTRAP_HIER_INTER_STEPS"},
	{"hier_inter_send_block", []string{"r", "i", "n", "l"}, "BOOTSTRAP_HIER_INTER_SEND_BLOCK"},
	{"hier_inter_recv_block", []string{"r", "i", "n", "l"}, "BOOTSTRAP_HIER_INTER_RECV_BLOCK"},
	{"hier_down_hops", []string{"k"}, "BOOTSTRAP_HIER_DOWN_HOPS"},
	{"hier_steps", []string{"n", "l"}, "BOOTSTRAP_HIER_STEPS"},
}

// pmlTreeChildrenRow lists the tree's children, one expression per child.
const pmlTreeChildrenRow = "ENC_SIG_TREE_CHILDREN"

// pmlMessageTypes are the flat bootstrap's frame types the model sends.
var pmlMessageTypes = []string{
	"BOOTSTRAP_MSG_INFO_TO_ROOT", "BOOTSTRAP_MSG_INFO_FROM_ROOT", "BOOTSTRAP_MSG_RING_DONE",
	"BOOTSTRAP_MSG_COMPLETE", "BOOTSTRAP_MSG_ABORT", "BOOTSTRAP_MSG_HELLO", "BOOTSTRAP_MSG_RING_DATA",
}

// promelaHeaders renders the model header of each release in specs.
func promelaHeaders(specs []*spec.Spec) ([]File, error) {
	var out []File
	for _, s := range specs {
		data, err := PromelaHeader(s)
		if err != nil {
			return nil, err
		}
		out = append(out, File{Path: PromelaHeaderName(s.Release.Name), Data: data})
	}
	return out, nil
}

// PromelaHeader renders the header the models include for s: one #define
// per fact, each naming the row it comes from.
func PromelaHeader(s *spec.Spec) ([]byte, error) {
	var b bytes.Buffer
	g := &pmlWriter{s: s, b: &b}
	b.WriteString(cBanner(s) + "\n")
	b.WriteString("/* The numbers and formulas model/*.pml take from the spec; each names its row. */\n")

	b.WriteString("\n/* forward handoff (handoff.pml) */\n")
	g.define("SLOT_COUNT", int64(s.Counts.Forward), "[counts] forward")
	probe := -1
	for _, f := range s.Forward {
		if f.Guard == "probe" {
			probe = f.Index
		}
	}
	if probe < 0 {
		return nil, fmt.Errorf("spec/%s: no [[forward]] row has guard = \"probe\"", s.Release.Name)
	}
	g.define("PROBE_INDEX", int64(probe), "the [[forward]] row with guard = \"probe\"")
	g.constant("COMPAT_ID", "NCCOM_COMPAT_ID")

	b.WriteString("\n/* per-NC bootstrap (pernc.pml): message sizes and where each field ends */\n")
	g.constant("SIG_MSG_SIZE", "ENC_SIG_MSG_SIZE")
	g.fieldEnd("SIG_DIGEST_END", "enc_sig_msg", "signature")
	g.fieldEnd("SIG_OK_END", "enc_sig_msg", "ok")
	g.constant("UID_MSG_SIZE", "ENC_UID_MSG_SIZE")
	g.fieldEnd("UID_ID_END", "enc_uid_msg", "id")
	g.fieldEnd("UID_VALID_END", "enc_uid_msg", "valid")
	g.treeChildren()
	for _, m := range pmlFormulas[:4] {
		g.formula(m)
	}

	b.WriteString("\n/* flat bootstrap (flat.pml): frame types, ring wiring and all-gather */\n")
	for _, t := range pmlMessageTypes {
		g.constant(t, t)
	}
	for _, m := range pmlFormulas[4:] {
		g.formula(m)
	}

	b.WriteString("\n/* hierarchical bootstrap (hier.pml): grouping into instances, the three rings */\n")
	for _, m := range pmlHierFormulas {
		g.formula(m)
	}
	if g.err != nil {
		return nil, g.err
	}
	return b.Bytes(), nil
}

type pmlWriter struct {
	s   *spec.Spec
	b   *bytes.Buffer
	err error
}

func (g *pmlWriter) fail(format string, args ...any) {
	if g.err == nil {
		g.err = fmt.Errorf("spec/%s: %s", g.s.Release.Name, fmt.Sprintf(format, args...))
	}
}

func (g *pmlWriter) define(name string, v int64, from string) {
	fmt.Fprintf(g.b, "#define %s %d\t/* %s */\n", name, v, from)
}

func (g *pmlWriter) constant(name, row string) {
	c := g.s.ConstantByName(row)
	if c == nil {
		g.fail("the models need the constant %s; add the row", row)
		return
	}
	v, ok := c.Int()
	if !ok {
		g.fail("constant %s: the models need an integer value", row)
		return
	}
	g.define(name, v, "constant "+row)
}

func (g *pmlWriter) fieldEnd(name, st, field string) {
	s := g.s.StructByName(st)
	if s == nil {
		g.fail("the models need struct %s; add the row", st)
		return
	}
	for _, f := range s.Fields {
		if f.Name == field {
			g.define(name, int64(f.End()), fmt.Sprintf("struct %s field %s: offset + size", st, field))
			return
		}
	}
	g.fail("struct %s has no field %s, which the models need", st, field)
}

// expression is the parsed string value of a formula row.
func (g *pmlWriter) expression(row string, vars []string) []*Formula {
	c := g.s.ConstantByName(row)
	if c == nil {
		g.fail("the models need the constant %s; add the row", row)
		return nil
	}
	v, ok := c.Str()
	if !ok {
		g.fail("constant %s: the value must be a string holding an expression", row)
		return nil
	}
	var es []*Formula
	for _, part := range strings.Split(v, ",") {
		e, err := parseExpr(strings.TrimSpace(part), vars...)
		if err != nil {
			g.fail("constant %s = %q: %v", row, v, err)
			return nil
		}
		es = append(es, e)
	}
	return es
}

func (g *pmlWriter) formula(m pmlMacro) {
	es := g.expression(m.row, m.params)
	if es == nil {
		return
	}
	if len(es) != 1 {
		g.fail("constant %s: one expression expected, found %d", m.row, len(es))
		return
	}
	fmt.Fprintf(g.b, "#define %s(%s) %s\t/* constant %s */\n", m.name, strings.Join(m.params, ", "), es[0].promela(), m.row)
}

// treeChildren writes TREE_CHILDREN and tree_child(r, k), the k-th child.
func (g *pmlWriter) treeChildren() {
	es := g.expression(pmlTreeChildrenRow, []string{"r"})
	if es == nil {
		return
	}
	g.define("TREE_CHILDREN", int64(len(es)), "constant "+pmlTreeChildrenRow+": how many expressions")
	body := es[len(es)-1].promela()
	for k := len(es) - 2; k >= 0; k-- {
		body = fmt.Sprintf("((k) == %d -> %s : %s)", k, es[k].promela(), body)
	}
	fmt.Fprintf(g.b, "#define tree_child(r, k) %s\t/* constant %s */\n", body, pmlTreeChildrenRow)
}

// Formulas parses the formula row of s the model headers render,
// naming only vars: one expression per comma-separated part. A test holds
// the runtime's code to the same expressions through Eval.
func Formulas(s *spec.Spec, row string, vars ...string) ([]*Formula, error) {
	g := &pmlWriter{s: s, b: &bytes.Buffer{}}
	es := g.expression(row, vars)
	if g.err != nil {
		return nil, g.err
	}
	return es, nil
}
