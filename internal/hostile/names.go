package hostile

import (
	"os"
	"path/filepath"

	"github.com/nrtabi/nrtabi/internal/cc"
)

// TerminalBytes are the bytes the names of the terminal-escape objects
// carry: ESC [ 2 J (clear the screen), BEL, a newline that would forge a
// line of its own, DEL, and 0x9b (a C1 CSI on an 8-bit terminal).
const TerminalBytes = "\x1b[2J\a\nforged: ok\x7f\x9b"

// asTerminalBytes is TerminalBytes in GNU as string syntax.
const asTerminalBytes = `\033[2J\007\nforged: ok\177\233`

// namesSource is StructName with a member whose name is TerminalBytes (at
// rt_major's place, so check reports a rename naming it), rt_minor typed by
// a base type whose name holds them, and a member whose name would end a C
// comment and a C string and declare a global ("*/ int evil; /*" and
// "\");int evil;//") and one named as a macro gcc predefines ("unix"),
// for show --c.
var namesSource = unit(`
.Lu64:	.uleb128 4; .string "long unsigned int"; .byte 8; .byte 7
.Lbad:	.uleb128 4; .string "u64` + asTerminalBytes + `"; .byte 8; .byte 7
.Lstruct: .uleb128 2; .string "` + StructName + `"; .uleb128 32
	.uleb128 3; .string "` + asTerminalBytes + `"; .long .Lu64 - .Lcu; .uleb128 0
	.uleb128 3; .string "rt_minor"; .long .Lbad - .Lcu; .uleb128 8
	.uleb128 3; .string "x*/ int evil; /*\");int evil2;//??/"; .long .Lu64 - .Lcu; .uleb128 16
	.uleb128 3; .string "unix"; .long .Lu64 - .Lcu; .uleb128 24
	.byte 0
`)

// TerminalNames writes the objects whose names from outside carry terminal
// control bytes: "escape-names" (DWARF member and type names, in a file
// whose own name holds them too) and "escape-debuglink" (no DWARF, a
// .gnu_debuglink naming a file whose name holds them). Every text a command
// prints of them must show the bytes escaped. It needs gcc and objcopy.
func TerminalNames(dir string) ([]ELFCase, error) {
	p, err := assemble(dir, "escape-names", namesSource)
	if err != nil {
		return nil, err
	}
	named := filepath.Join(dir, "escape"+TerminalBytes+".o")
	if err := os.Rename(p, named); err != nil {
		return nil, err
	}
	src := filepath.Join(dir, "escape-plain.c")
	if err := os.WriteFile(src, []byte("int hostile_plain(void) { return 1; }\n"), 0o644); err != nil {
		return nil, err
	}
	link := filepath.Join(dir, "escape-debuglink.o")
	if err := cc.Run(dir, "-c", "-o", link, src); err != nil {
		return nil, err
	}
	content := append([]byte(TerminalBytes+".debug"), 0)
	for len(content)%4 != 0 {
		content = append(content, 0)
	}
	content = append(content, 0, 0, 0, 0) // CRC: never reached
	sec := filepath.Join(dir, "escape-debuglink.link")
	if err := os.WriteFile(sec, content, 0o644); err != nil {
		return nil, err
	}
	if err := runObjcopy("--add-section", ".gnu_debuglink="+sec, link); err != nil {
		return nil, err
	}
	return []ELFCase{{"escape-names", named}, {"escape-debuglink", link}}, nil
}
