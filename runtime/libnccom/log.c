/* One line per message on stderr, in NCCL's "NCCL WARN" / "NCCL INFO" shape. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nccom.h"

static void emit(const char *level, const char *fmt, va_list ap)
{
	char msg[1024];
	if (vsnprintf(msg, sizeof msg, fmt, ap) < 0)
		msg[0] = 0;
	/* One write per line: ranks share a terminal in the tests. */
	char line[1100];
	int n = snprintf(line, sizeof line, "libnccom %d NCCL %s %s\n", (int)getpid(), level, msg);
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
