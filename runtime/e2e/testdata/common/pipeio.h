/*
 * The record I/O of the fuzz drivers (escapecheck.c, perinstancecheck.c):
 * a whole read or write of n bytes on fd, or -1 (end of input, or an error).
 */
#ifndef NRTABI_PIPEIO_H
#define NRTABI_PIPEIO_H

#include <stddef.h>
#include <sys/types.h>
#include <unistd.h>

static int io_all(int fd, void *p, size_t n, int reading)
{
	char *c = p;
	while (n > 0) {
		ssize_t k = reading ? read(fd, c, n) : write(fd, c, n);
		if (k <= 0)
			return -1;
		c += k;
		n -= (size_t)k;
	}
	return 0;
}

#endif
