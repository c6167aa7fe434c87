package layoutcheck

import (
	"fmt"
	"strings"
)

// CheckCFlags refuses a --cflags word that is not a preprocessor or layout
// flag: the headers are compiled to read their types, so a flag that
// would run another program (-fplugin, -wrapper, -B), write elsewhere (-o)
// or read a file as options (@FILE, -specs) has no place, and is named
// (docs/layoutcheck.md#headers-as-input). A flag taking its value in the
// next word (-include FILE) must have one.
func CheckCFlags(flags []string) error {
	for i := 0; i < len(flags); i++ {
		f := flags[i]
		switch {
		case f == "-include" || f == "-imacros" || f == "-isystem" || f == "-idirafter" || f == "-iquote" || f == "-I" || f == "-D" || f == "-U":
			if i+1 == len(flags) {
				return fmt.Errorf("--cflags %q: %s needs a value after it", strings.Join(flags, " "), f)
			}
			i++
		case hasAnyPrefix(f, "-D", "-U", "-I", "-std=", "-isystem", "-idirafter", "-iquote"):
		case f == "-fshort-enums" || f == "-fno-short-enums" || f == "-fsigned-char" || f == "-funsigned-char" ||
			f == "-fpack-struct" || strings.HasPrefix(f, "-fpack-struct="):
		default:
			return fmt.Errorf("--cflags: %q is not a flag the headers are compiled with; give preprocessor and layout flags only (-DNAME[=V], -UNAME, -include FILE, -I DIR, -isystem DIR, -std=STD, -fshort-enums, -fpack-struct[=N], -f[un]signed-char)", f)
		}
	}
	return nil
}

func hasAnyPrefix(s string, ps ...string) bool {
	for _, p := range ps {
		if strings.HasPrefix(s, p) && len(s) > len(p) {
			return true
		}
	}
	return false
}
