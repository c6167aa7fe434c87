/*
 * Drives the reference libnccom's split-id decode (nccom_split_decode,
 * runtime/libnccom/split.c) for FuzzCSplitID: reads 128-byte ids on stdin
 * and answers each with {i32 verdict (1 decoded, 0 not a split id, -1
 * refused), u32 world_size, u64 cluster, i64 epoch, u32 rank_n, u32 root,
 * u32 serial} and, when it decoded, the 128 bytes nccom_split_encode writes
 * back. Exits 0 at the end of its input.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "nccom.h"
#include "pipeio.h"

int main(void)
{
	for (;;) {
		char id[NCCOM_UNIQUE_ID_BYTES];
		if (io_all(STDIN_FILENO, id, sizeof id, 1) != 0)
			return 0;
		struct nccom_split_id s;
		int32_t v = nccom_split_decode(id, &s);
		unsigned char out[36 + NCCOM_UNIQUE_ID_BYTES] = {0};
		memcpy(out, &v, 4);
		memcpy(out + 4, &s.world_size, 4);
		memcpy(out + 8, &s.cluster, 8);
		memcpy(out + 16, &s.epoch, 8);
		memcpy(out + 24, &s.rank_n, 4);
		memcpy(out + 28, &s.root, 4);
		memcpy(out + 32, &s.serial, 4);
		if (v == 1)
			nccom_split_encode(&s, (char *)out + 36);
		if (io_all(STDOUT_FILENO, out, sizeof out, 0) != 0)
			return 2;
	}
}
