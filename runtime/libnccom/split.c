/*
 * The split id (docs/bootstrap.md#group-comm-split, extension
 * group-comm-split): the unique id of a replica group's comm derived from
 * the agreed world's bootstrap instead of a second root. libnrt never reads
 * the id, so neuronGetUniqueId writes in it what the group's init checks,
 * and the Go ranks (runtime/transport/tcp/splitid.go) write and read the
 * same 128 bytes, little-endian: "nrtsplit", version 1, the world's size,
 * cluster id and epoch, the group's rank_n, the maker's world rank, its
 * serial (from 1); bytes 44..127 zero. This file is the codec and the
 * variable that chooses it; comm.c makes and joins the comms.
 */
#include <stdlib.h>
#include <string.h>

#include "nccom.h"

#define SPLIT_MAGIC SPLIT_ID_MAGIC
#define SPLIT_VERSION ((uint32_t)SPLIT_ID_VERSION)
#define SPLIT_USED SPLIT_ID_USED

static void put32(unsigned char *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

static void put64(unsigned char *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

static uint32_t get32(const unsigned char *p)
{
	uint32_t v = 0;
	for (int i = 0; i < 4; i++)
		v |= (uint32_t)p[i] << (8 * i);
	return v;
}

static uint64_t get64(const unsigned char *p)
{
	uint64_t v = 0;
	for (int i = 0; i < 8; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

bool nccom_is_split_id(const char id[NCCOM_UNIQUE_ID_BYTES])
{
	return memcmp(id, SPLIT_MAGIC, sizeof SPLIT_MAGIC - 1) == 0;
}

void nccom_split_encode(const struct nccom_split_id *s, char id[NCCOM_UNIQUE_ID_BYTES])
{
	unsigned char *p = (unsigned char *)id;
	memset(p, 0, NCCOM_UNIQUE_ID_BYTES);
	memcpy(p, SPLIT_MAGIC, sizeof SPLIT_MAGIC - 1);
	put32(p + 8, SPLIT_VERSION);
	put32(p + 12, s->world_size);
	put64(p + 16, s->cluster);
	put64(p + 24, (uint64_t)s->epoch);
	put32(p + 32, s->rank_n);
	put32(p + 36, s->root);
	put32(p + 40, s->serial);
}

int nccom_split_decode(const char id[NCCOM_UNIQUE_ID_BYTES], struct nccom_split_id *s)
{
	const unsigned char *p = (const unsigned char *)id;
	memset(s, 0, sizeof *s);
	if (!nccom_is_split_id(id))
		return 0;
	uint32_t v = get32(p + 8);
	if (v != SPLIT_VERSION) {
		nccom_warn("split unique id: version %u, this library reads %u", v, SPLIT_VERSION);
		return -1;
	}
	for (int i = SPLIT_USED; i < NCCOM_UNIQUE_ID_BYTES; i++)
		if (p[i] != 0) {
			nccom_warn("split unique id: byte %d is %#x, bytes %d..%d must be zero", i, p[i], SPLIT_USED, NCCOM_UNIQUE_ID_BYTES - 1);
			return -1;
		}
	*s = (struct nccom_split_id){.world_size = get32(p + 12), .cluster = get64(p + 16), .epoch = (int64_t)get64(p + 24),
				     .rank_n = get32(p + 32), .root = get32(p + 36), .serial = get32(p + 40)};
	if (s->world_size < 1 || s->world_size > BOOTSTRAP_MAX_RANKS) {
		nccom_warn("split unique id: world size %u is outside 1..%d (BOOTSTRAP_MAX_RANKS)", s->world_size, BOOTSTRAP_MAX_RANKS);
		return -1;
	}
	if (s->rank_n != s->world_size) {
		nccom_warn("split unique id: rank_n %u is not the world's size %u (only the whole world in order is split)", s->rank_n, s->world_size);
		return -1;
	}
	if (s->root >= s->world_size) {
		nccom_warn("split unique id: its maker, rank %u, is not a rank of the world of %u", s->root, s->world_size);
		return -1;
	}
	if (s->serial == 0) {
		nccom_warn("split unique id: serial 0 (makers count from 1)");
		return -1;
	}
	return 1;
}

NRT_STATUS nccom_group_init_split(bool *split)
{
	const char *v = getenv(ENV_BOOTSTRAP_GROUP_INIT);
	*split = v == NULL || v[0] == 0 || strcmp(v, "split") == 0;
	if (*split || strcmp(v, "flat") == 0 || strcmp(v, "hier") == 0)
		return NRT_SUCCESS;
	char esc[96];
	nccom_warn("%s=\"%s\": use split (the default: a group of the whole world derives its comm from the world's bootstrap), hier or flat (this library's group comms then bootstrap flat), the same on every rank",
		   ENV_BOOTSTRAP_GROUP_INIT, nccom_escape(v, strlen(v), esc, sizeof esc));
	return NCCOM_INVALID_ARGUMENT;
}
