#define SLOT_COUNT 37
#define PROBE_INDEX 0
#define COMPAT_ID 89
#define SIG_MSG_SIZE 17
#define SIG_OK_END 17
#define UID_MSG_SIZE 129
#define UID_ID_END 128
#define UID_VALID_END 129
#define TREE_CHILDREN 2
#define tree_child(r, k) ((k) == 0 -> (2*(r) + 1) : (2*(r) + 2))
#define tree_parent(r) (((r) - 1) >> 1)
#define cube_parent(r, mask) ((r) & ~(mask))
#define cube_child(r, step) ((r) + (step))
#define cube_climb_stop(n, mask) ((n) <= (mask))
#define ring_next(r, n) (((r) + 1) % (n))
#define ring_prev(r, n) (((r) - 1 + (n)) % (n))
#define ring_steps(n) ((n) - 1)
#define SIG_DIGEST_END 16
#define ring_send_slice(r, i, n) (((r) - (i) + (n)) % (n))
#define ring_recv_slice(r, i, n) (((r) - (i) - 1 + (n)) % (n))
#define BOOTSTRAP_MSG_INFO_TO_ROOT 1
#define BOOTSTRAP_MSG_INFO_FROM_ROOT 2
#define BOOTSTRAP_MSG_RING_DONE 4
#define BOOTSTRAP_MSG_COMPLETE 5
#define BOOTSTRAP_MSG_ABORT 6
#define BOOTSTRAP_MSG_HELLO 7
#define BOOTSTRAP_MSG_RING_DATA 8
