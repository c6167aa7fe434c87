/*
 * One line per message on stderr, in NCCL's "NCCL WARN" / "NCCL INFO" shape,
 * and the escaping of what peers send before it reaches one: a peer's git
 * hash or ABORT text may hold ESC, BEL or newlines that would forge lines or
 * drive the terminal (docs/libnccom.md#deadlines-and-what-peers-send).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nccom.h"

static const char hex[] = "0123456789abcdef";

/* Kept as is: printable ASCII. A backslash stays too, so a root's reason
 * that already holds escaped bytes reaches a rank's log readable (a peer
 * writing "\x1b" as text gets four harmless characters). */
static bool plain(unsigned char c)
{
	return c >= 0x20 && c < 0x7f;
}

const char *nccom_escape(const void *data, size_t len, char *out, size_t cap)
{
	const unsigned char *p = data;
	size_t k = 0;
	if (cap == 0)
		return out;
	for (size_t i = 0; i < len; i++) {
		size_t need = plain(p[i]) ? 1 : 4;
		/* Room for this byte and, if more follow, the "..." that says so. */
		if (k + need + (i + 1 < len ? 3 : 0) >= cap) {
			if (k + 3 < cap) {
				memcpy(out + k, "...", 3);
				k += 3;
			}
			break;
		}
		if (need == 1) {
			out[k++] = (char)p[i];
		} else {
			out[k++] = '\\';
			out[k++] = 'x';
			out[k++] = hex[p[i] >> 4];
			out[k++] = hex[p[i] & 15];
		}
	}
	out[k] = 0;
	return out;
}

static void emit(const char *level, const char *fmt, va_list ap)
{
	char msg[1024];
	if (vsnprintf(msg, sizeof msg, fmt, ap) < 0)
		msg[0] = 0;
	/* The last line of defence: whatever a format pasted in, no control
	 * byte leaves as is (peer bytes were escaped where they were read). */
	char safe[sizeof msg * 4];
	size_t k = 0;
	for (const unsigned char *p = (const unsigned char *)msg; *p && k + 5 < sizeof safe; p++) {
		if (*p >= 0x20 && *p != 0x7f) {
			safe[k++] = (char)*p;
			continue;
		}
		safe[k++] = '\\';
		safe[k++] = 'x';
		safe[k++] = hex[*p >> 4];
		safe[k++] = hex[*p & 15];
	}
	safe[k] = 0;
	/* One write per line: ranks share a terminal in the tests. */
	char line[sizeof safe + 64];
	int n = snprintf(line, sizeof line, "libnccom %d NCCL %s %s\n", (int)getpid(), level, safe);
	if (n > 0) {
		size_t len = (size_t)n < sizeof line ? (size_t)n : sizeof line - 1;
		if (write(STDERR_FILENO, line, len) < 0)
			return; /* nowhere left to report it */
	}
}

void nccom_warn(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	emit("WARN", fmt, ap);
	va_end(ap);
}

void nccom_info(const char *fmt, ...)
{
	const char *lvl = getenv("NRTABI_LOG_LEVEL");
	if (lvl == NULL || (strcmp(lvl, "debug") != 0 && strcmp(lvl, "info") != 0))
		return;
	va_list ap;
	va_start(ap, fmt);
	emit("INFO", fmt, ap);
	va_end(ap);
}
