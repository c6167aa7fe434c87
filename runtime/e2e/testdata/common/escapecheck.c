/*
 * Drives the reference libnccom's escaper (runtime/libnccom/log.c) for
 * FuzzCEscape: reads records {u32 cap, u32 len, len bytes} on stdin and
 * answers each with {u32 n, n bytes}, what nccom_escape wrote into a buffer
 * of cap bytes (n = 0 when cap is 0). Exits 0 at the end of its input.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nccom.h"
#include "pipeio.h"

int main(void)
{
	for (;;) {
		uint32_t hdr[2];
		if (io_all(STDIN_FILENO, hdr, sizeof hdr, 1) != 0)
			return 0;
		if (hdr[0] > 1u << 20 || hdr[1] > 1u << 20)
			return 2;
		char *in = malloc(hdr[1] + 1u);
		if (in == NULL || io_all(STDIN_FILENO, in, hdr[1], 1) != 0)
			return 2;
		/* Exactly cap bytes: ASan sees any write past them. */
		char *buf = hdr[0] > 0 ? malloc(hdr[0]) : NULL;
		if (hdr[0] > 0 && buf == NULL)
			return 2;
		nccom_escape(in, hdr[1], buf, hdr[0]);
		uint32_t n = hdr[0] > 0 ? (uint32_t)strnlen(buf, hdr[0]) : 0;
		if (n == hdr[0] && hdr[0] > 0)
			return 3; /* not terminated within cap */
		if (io_all(STDOUT_FILENO, &n, sizeof n, 0) != 0 || io_all(STDOUT_FILENO, buf, n, 0) != 0)
			return 2;
		free(buf);
		free(in);
	}
}
