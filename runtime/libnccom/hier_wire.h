/*
 * TEMPORARY: the hierarchical bootstrap's wire structs, laid out as in the
 * shape shared by the issue-27 parts (extInfoHier 64 B, bootstrap_root_reply_hier
 * 96 B), until part 27G's spec rows generate them into nrtabi.h. Deleted at
 * that merge; the static asserts below pin what the C side assumes.
 */
#ifndef NCCOM_HIER_WIRE_H
#define NCCOM_HIER_WIRE_H

#include "nrtabi.h"

struct extInfoHier {
	struct extInfoGlobal global;
	uint32_t per_instance;
	uint32_t instance;
};
_Static_assert(sizeof(struct extInfoHier) == 64, "extInfoHier is 64 bytes");
_Static_assert(offsetof(struct extInfoHier, per_instance) == 56, "extInfoHier.per_instance @56");
_Static_assert(offsetof(struct extInfoHier, instance) == 60, "extInfoHier.instance @60");

struct bootstrap_root_reply_hier {
	uint64_t cluster_id;
	time_t epoch;
	nccl_socket_address_t intra_next;
	unsigned char nrtabi_opaque_44[4];
	nccl_socket_address_t inter_next;
	uint32_t instance;
	uint32_t ninstances;
	uint32_t local_rank;
	uint32_t local_n;
	unsigned char nrtabi_opaque_92[4];
};
_Static_assert(sizeof(struct bootstrap_root_reply_hier) == 96, "bootstrap_root_reply_hier is 96 bytes");
_Static_assert(offsetof(struct bootstrap_root_reply_hier, intra_next) == 16, "intra_next @16");
_Static_assert(offsetof(struct bootstrap_root_reply_hier, inter_next) == 48, "inter_next @48");
_Static_assert(offsetof(struct bootstrap_root_reply_hier, instance) == 76, "instance @76");
_Static_assert(offsetof(struct bootstrap_root_reply_hier, ninstances) == 80, "ninstances @80");
_Static_assert(offsetof(struct bootstrap_root_reply_hier, local_rank) == 84, "local_rank @84");
_Static_assert(offsetof(struct bootstrap_root_reply_hier, local_n) == 88, "local_n @88");

#define ENV_BOOTSTRAP_PER_INSTANCE "NRTABI_BOOTSTRAP_PER_INSTANCE"
#define BOOTSTRAP_PER_INSTANCE_MAX BOOTSTRAP_MAX_RANKS

#endif
