package spec

import (
	"fmt"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// The grammars of the places the generator emits spec text into. The
// generator is a compiler whose input may come from a vendor drop or a pull
// request, so `nrtabi spec validate` holds every name to the grammar of every
// place it lands, and every free text to what a comment or string literal
// can carry; docs/spec-format.md#where-spec-text-is-emitted has the table.

// cKeywords are C11 keywords, the C23 ones, the GNU spellings gcc accepts
// without underscores (asm, typeof) and C++'s: the header is included from
// C++ as well (its extern "C" block). This file's sets are made on first
// use, not at start-up: every command links this package, few validate
// names (docs/benchmarks.md#start-up-2026-12-03).
var cKeywords = sync.OnceValue(func() map[string]bool {
	return setOf(
		// C11
		"auto", "break", "case", "char", "const", "continue", "default", "do", "double",
		"else", "enum", "extern", "float", "for", "goto", "if", "inline", "int", "long",
		"register", "restrict", "return", "short", "signed", "sizeof", "static", "struct",
		"switch", "typedef", "union", "unsigned", "void", "volatile", "while",
		"_Alignas", "_Alignof", "_Atomic", "_Bool", "_Complex", "_Generic", "_Imaginary",
		"_Noreturn", "_Static_assert", "_Thread_local",
		// C23 and GNU
		"alignas", "alignof", "bool", "constexpr", "false", "nullptr", "static_assert",
		"thread_local", "true", "typeof", "typeof_unqual", "asm",
		// C++
		"and", "and_eq", "bitand", "bitor", "catch", "char8_t", "char16_t", "char32_t",
		"class", "co_await", "co_return", "co_yield", "compl", "concept", "const_cast",
		"consteval", "constinit", "decltype", "delete", "dynamic_cast", "explicit", "export",
		"friend", "mutable", "namespace", "new", "noexcept", "not", "not_eq", "operator",
		"or", "or_eq", "private", "protected", "public", "reinterpret_cast", "requires",
		"static_cast", "template", "this", "throw", "try", "typeid", "typename", "using",
		"virtual", "wchar_t", "xor", "xor_eq",
	)
})

// cTaken are the ordinary identifiers the generated C uses from the system
// headers it includes (gen/templates) and its own locals next to spec
// parameters: a spec name equal to one would redefine it (a constant is a
// #define, so it would rewrite every use).
var cTaken = sync.OnceValue(func() map[string]bool {
	return setOf(
		"NULL", "offsetof", "size_t", "ssize_t", "time_t", "uintptr_t", "intptr_t",
		"int8_t", "int16_t", "int32_t", "int64_t", "uint8_t", "uint16_t", "uint32_t", "uint64_t",
		"INT64_C", "UINT64_C", "UINT32_C", "INT32_C", "cpu_set_t", "CPU_SETSIZE",
		"pthread_mutex_t", "pthread_cond_t", "errno", "stderr", "stdout", "stdin",
		"memset", "memcpy", "memcmp", "strlen", "strncpy", "snprintf", "fprintf", "printf",
		"calloc", "malloc", "free", "clock_gettime", "CLOCK_REALTIME", "ETIMEDOUT",
		"timespec", "tv_sec", "tv_nsec", "main", "rc",
	)
})

// cOwnedPrefixes start the identifiers the generator declares itself.
var cOwnedPrefixes = []string{"nrtabi_", "NRTABI_", "nrt_nccl_", "NRT_NCCL_", "nccom_stub_", "NCCOM_STUB_",
	"pthread_", "PTHREAD_", "sched_", "SCHED_", "CPU_", "CLOCK_", "__"}

func setOf(xs ...string) map[string]bool {
	m := make(map[string]bool, len(xs))
	for _, x := range xs {
		m[x] = true
	}
	return m
}

// CNameProblem says why s cannot be emitted as a C identifier of the
// generated code, "" when it can: an ASCII identifier that is not a C (or
// C++) keyword, not reserved to the implementation (a leading "__" or "_"
// and an upper-case letter), and not a name the generated C or the system
// headers it includes already use.
func CNameProblem(s string) string {
	if p := CMemberProblem(s); p != "" {
		return p
	}
	if cSystemDecls()[s] {
		return "the system headers the generated C includes declare it"
	}
	return ""
}

// CMemberProblem is CNameProblem for a struct member, which has a namespace
// of its own: only a system macro, not a system declaration, breaks it.
func CMemberProblem(s string) string {
	switch {
	case s == "":
		return "it is empty"
	case !IsIdent(s):
		return "it is not a C identifier (letters, digits and _, not starting with a digit)"
	case cKeywords()[s]:
		return "it is a C or C++ keyword"
	case len(s) >= 2 && s[0] == '_' && (s[1] == '_' || 'A' <= s[1] && s[1] <= 'Z'):
		return "it is reserved to the C implementation (a leading __ or _ and an upper-case letter)"
	case cTaken()[s]:
		return "the generated C already uses it (a system header name or a local)"
	case cSystemMacros()[s]:
		return "the system headers the generated C includes define it as a macro"
	}
	for _, p := range cOwnedPrefixes {
		if strings.HasPrefix(s, p) {
			return fmt.Sprintf("names starting %s belong to the generated code or the system headers", p)
		}
	}
	return ""
}

// VersionNodeProblem says why s cannot be a version-node name of a GNU ld
// version script, "" when it can: letters, digits, '_' and '.', starting
// with a letter or '_' (NRT_2.0.0). Anything else (space, braces, ';',
// quotes, '*', '/') would be live linker-script text.
func VersionNodeProblem(s string) string {
	if s == "" {
		return "it is empty"
	}
	if c := s[0]; !(c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z') {
		return "it does not start with a letter or _"
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c == '_' || c == '.' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9') {
			return fmt.Sprintf("it holds %s; a version node is letters, digits, _ and .", quoteByte(c))
		}
	}
	return ""
}

// FileNameProblem says why s cannot be a release name, SONAME or library
// file name: these land in generated comments, Go build tags (a release,
// as nrtabi_release_<name with . and - as _>) and -Wl,-soname. Letters,
// digits, '.', '_', '-' and '+', starting with a letter or digit.
func FileNameProblem(s string) string {
	if s == "" {
		return "it is empty"
	}
	if c := s[0]; !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9') {
		return "it does not start with a letter or digit"
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c == '_' || c == '.' || c == '-' || c == '+' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9') {
			return fmt.Sprintf("it holds %s; use letters, digits, ., _, - and +", quoteByte(c))
		}
	}
	return ""
}

// TextProblem says why free text (a source, a note, a message) cannot be
// emitted, "" when it can: it must be UTF-8 without control characters
// other than tab and newline. The generator escapes what it emits all the
// same (gen/escape.go); this keeps terminals, logs and diffs clean too.
func TextProblem(s string) string {
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			return fmt.Sprintf("byte %d is not UTF-8 (%#x)", i, s[i])
		case r == '\t' || r == '\n':
		case r < 0x20 || r == 0x7f || 0x80 <= r && r < 0xa0:
			return fmt.Sprintf("byte %d is the control character %U", i, r)
		case r == '\ufeff' || r == '\u2028' || r == '\u2029' || unicode.Is(unicode.Bidi_Control, r):
			return fmt.Sprintf("byte %d is the invisible control %U", i, r)
		}
		i += n
	}
	return ""
}

// CommentTextProblem is TextProblem for text the generator places inside
// a /* */ comment: the delimiters are refused too, so a reader of the spec
// sees what the generated comment says.
func CommentTextProblem(s string) string {
	if p := TextProblem(s); p != "" {
		return p
	}
	for _, d := range []string{"*/", "/*"} {
		if i := strings.Index(s, d); i >= 0 {
			return fmt.Sprintf("byte %d starts %q, which would end or nest the C comment it is emitted into", i, d)
		}
	}
	return ""
}

func quoteByte(c byte) string {
	if c < 0x20 || c >= 0x7f {
		return fmt.Sprintf("byte %#02x", c)
	}
	return fmt.Sprintf("%q", string(c))
}

// goFixed are the package-level identifiers the generated Go declares for
// itself (gen/go*.go); a spec name whose Go form is one of them would
// redeclare it.
var goFixed = sync.OnceValue(func() map[string]bool {
	return setOf("PthreadMutex", "StdVector", "CPUSet", "Release", "BuildTag", "LibnrtSONAME", "LibnrtBuildID",
		"LibnrtGit", "LibnrtRuntimeVersion", "CollectivesVersion", "LibnccomSONAME", "LibnccomBuildID", "LibnccomGit", "SlotBase", "SlotTop", "SlotStride",
		"NumForward", "NumReverse", "Guarded", "Probe", "Hot", "ForwardSymbol", "Forward", "ReverseSymbol",
		"Reverse", "VersionNode", "VersionNodes", "TestLayout")
})

// goMethods are the methods the generated Go declares on struct mirrors; a
// field of that Go name would clash with them.
var goMethods = sync.OnceValue(func() map[string]bool {
	return setOf("MarshalTo", "UnmarshalFrom", "String")
})

// GoFixedNames are the package-level names the generated Go declares
// itself, for the generator's test that holds this list to the output.
func GoFixedNames() []string {
	out := make([]string, 0, len(goFixed()))
	for n := range goFixed() {
		out = append(out, n)
	}
	return out
}

// initialisms are upper-cased whole when they form a word of a Go name.
var initialisms = sync.OnceValue(func() map[string]string {
	return map[string]string{
		"id": "ID", "ids": "IDs", "mla": "MLA", "rid": "RID", "pci": "PCI", "bdf": "BDF",
		"rdh": "RDH", "vnc": "VNC", "ofi": "OFI", "cpu": "CPU", "uid": "UID", "nrt": "NRT",
		"nec": "NEC", "nc": "NC", "mr": "MR",
	}
})

// GoName turns a C identifier (snake_case or camelCase) into an exported Go
// name. It always starts with an upper-case letter, so it is never a Go
// keyword or predeclared identifier; two C names may share one (a_b, aB),
// which the validator refuses where both land in one Go scope.
func GoName(c string) string {
	c = strings.TrimSuffix(c, "_t")
	var words []string
	for _, part := range strings.Split(c, "_") {
		words = append(words, splitCamel(part)...)
	}
	var b strings.Builder
	for _, w := range words {
		if w == "" {
			continue
		}
		if up, ok := initialisms()[strings.ToLower(w)]; ok {
			b.WriteString(up)
			continue
		}
		r := []rune(strings.ToLower(w))
		r[0] = unicode.ToUpper(r[0])
		b.WriteString(string(r))
	}
	out := b.String()
	if out == "" || !unicode.IsUpper([]rune(out)[0]) {
		out = "X" + out
	}
	return out
}

// splitCamel splits "extRingRecvFd" into ext Ring Recv Fd and "nRanks" into n Ranks.
func splitCamel(s string) []string {
	var out []string
	start := 0
	rs := []rune(s)
	for i := 1; i < len(rs); i++ {
		if unicode.IsUpper(rs[i]) && !unicode.IsUpper(rs[i-1]) {
			out = append(out, string(rs[start:i]))
			start = i
		}
	}
	return append(out, string(rs[start:]))
}
