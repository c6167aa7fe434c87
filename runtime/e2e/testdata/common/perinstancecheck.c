/*
 * Drives the reference libnccom's reading of NRTABI_BOOTSTRAP_PER_INSTANCE
 * (nccom_per_instance, runtime/libnccom/hier.c) for FuzzCPerInstance: reads
 * records {u32 len, len bytes} on stdin, sets the variable to those bytes
 * (len 0: unset) and answers each with {i32 status, i32 L}. Exits 0 at the
 * end of its input.
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
		uint32_t len;
		if (io_all(STDIN_FILENO, &len, sizeof len, 1) != 0)
			return 0;
		if (len > 1u << 16)
			return 2;
		char *in = malloc(len + 1u);
		if (in == NULL || io_all(STDIN_FILENO, in, len, 1) != 0)
			return 2;
		in[len] = 0;
		if ((len == 0 ? unsetenv(ENV_BOOTSTRAP_PER_INSTANCE) : setenv(ENV_BOOTSTRAP_PER_INSTANCE, in, 1)) != 0)
			return 2;
		int L = -1;
		int32_t out[2] = {(int32_t)nccom_per_instance(&L), L};
		free(in);
		if (io_all(STDOUT_FILENO, out, sizeof out, 0) != 0)
			return 2;
	}
}
