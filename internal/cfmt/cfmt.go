// Package cfmt formats the C printf formats the spec's exact messages are
// written in (%u, %lu, %d, %s, %p, ...) the way the C library would, so a Go
// runtime can log byte-identical text from the abi.Msg* constants.
package cfmt

import (
	"fmt"
	"strings"
)

// Sprintf formats a C printf format. Integer arguments are converted to the
// width and signedness the conversion names (%u reads a 32-bit unsigned, %lu
// a 64-bit one, %d a signed int), so -1 prints as 4294967295 under %u, as in
// C. A format with too few arguments prints %!verb(MISSING) like fmt.
func Sprintf(format string, args ...any) string {
	var b strings.Builder
	ai := 0
	for i := 0; i < len(format); i++ {
		c := format[i]
		if c != '%' {
			b.WriteByte(c)
			continue
		}
		j := i + 1
		for j < len(format) && strings.IndexByte("-+ #0", format[j]) >= 0 {
			j++
		}
		for j < len(format) && (format[j] >= '0' && format[j] <= '9' || format[j] == '.') {
			j++
		}
		spec := format[i+1 : j] // flags, width, precision
		long := 0
		for j < len(format) && strings.IndexByte("hlLqjzt", format[j]) >= 0 {
			if strings.IndexByte("lLqjzt", format[j]) >= 0 {
				long++
			}
			j++
		}
		if j >= len(format) {
			b.WriteString(format[i:])
			break
		}
		verb := format[j]
		i = j
		if verb == '%' {
			b.WriteByte('%')
			continue
		}
		if ai >= len(args) {
			fmt.Fprintf(&b, "%%!%c(MISSING)", verb)
			continue
		}
		a := args[ai]
		ai++
		switch verb {
		case 'd', 'i':
			fmt.Fprintf(&b, "%"+spec+"d", signed(a, long > 0))
		case 'u':
			fmt.Fprintf(&b, "%"+spec+"d", unsigned(a, long > 0))
		case 'x', 'X', 'o':
			fmt.Fprintf(&b, "%"+spec+string(verb), unsigned(a, long > 0))
		case 'p':
			fmt.Fprintf(&b, "0x%x", unsigned(a, true))
		case 'c':
			if v, ok := toInt(a); ok {
				b.WriteByte(byte(v))
			} else {
				fmt.Fprintf(&b, "%c", a)
			}
		default: // s, f, e, g and anything else fmt reads the same way
			fmt.Fprintf(&b, "%"+spec+string(verb), a)
		}
	}
	return b.String()
}

func signed(a any, long bool) any {
	v, ok := toInt(a)
	if !ok {
		return a
	}
	if long {
		return int64(v)
	}
	return int64(int32(v))
}

func unsigned(a any, long bool) any {
	v, ok := toInt(a)
	if !ok {
		return a
	}
	if long {
		return v
	}
	return uint64(uint32(v))
}

// toInt is a's two's-complement bits, as C would pass them.
func toInt(a any) (uint64, bool) {
	switch v := a.(type) {
	case int:
		return uint64(v), true
	case int8:
		return uint64(v), true
	case int16:
		return uint64(v), true
	case int32:
		return uint64(v), true
	case int64:
		return uint64(v), true
	case uint:
		return uint64(v), true
	case uint8:
		return uint64(v), true
	case uint16:
		return uint64(v), true
	case uint32:
		return uint64(v), true
	case uint64:
		return v, true
	case uintptr:
		return uint64(v), true
	case bool:
		if v {
			return 1, true
		}
		return 0, true
	}
	return 0, false
}
