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
