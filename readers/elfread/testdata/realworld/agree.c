/* C constructs held to pahole by the real-artefact agreement test
   (readers/elfread/realworld_test.go): bitfields across storage units,
   packed and aligned structs, anonymous members, flexible arrays, arrays
   of arrays, function pointers, _Atomic, _Complex. */
#include <stddef.h>
#include <stdint.h>

struct inner { short s; char c; };
struct bits {
	unsigned a : 3, b : 9;
	unsigned long long wide : 40, rest : 24;
	signed char sc : 2;
	int : 0;
	_Bool flag : 1;
	uint16_t u16 : 7;
	enum { E0, E1, E2 } e : 2;
};
struct anon {
	int a;
	struct { int x, y; } named;
	union { int u1; char u2[3]; };
	struct { long l1; struct { char deep; }; };
	char flex[];
};
union number { int i; float f; double d; struct inner in; unsigned bf : 5; };
struct packed_bits { char c; unsigned long long x : 40, y : 30; int z; } __attribute__((packed));
struct aligned { char c; int v __attribute__((aligned(32))); } __attribute__((aligned(64)));
struct arrays { char grid[2][3]; int cube[2][2][2]; struct inner ins[4]; char *names[3]; };
struct fptrs {
	int (*cmp)(const void *, const void *);
	void (*handlers[4])(int);
	void (*(*signalish)(int, void (*)(int)))(int);
	_Atomic int counter;
	_Complex double z;
	long double ld;
	volatile const unsigned long *vp;
};
struct zero { int n; int z[0]; };
typedef struct { int tx; struct bits b; } tdef_t;
struct self { struct self *next; tdef_t t; size_t n; };

struct bits g_bits;
struct anon g_anon;
union number g_number;
struct packed_bits g_packed;
struct aligned g_aligned;
struct arrays g_arrays;
struct fptrs g_fptrs;
struct zero g_zero;
struct self g_self;
