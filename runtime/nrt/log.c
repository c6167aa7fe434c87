#include <stdarg.h>
#include <stdio.h>

#include "nrt_slots.h"
#include "_cgo_export.h"

/* The trampolines' and the handoff's log hook: format here with the spec's
 * C format, hand the line to Go's slog. */
void nrt_nccl_log(int level, const char *fn, const char *fmt, ...)
{
	char msg[2048];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	nrtLog(level, (char *)fn, msg);
}
