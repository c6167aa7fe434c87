// C++ constructs held to pahole by the real-artefact agreement test
// (readers/elfread/realworld_test.go): single, multiple and virtual
// inheritance, empty bases, vtable pointers, templates, pointers to
// members, references, bitfields, static members, nested types.
#include <map>
#include <string>
#include <vector>
#include <memory>

namespace app {
struct base { virtual ~base(); int b; };
struct point { int x, y; int sum() const { return x + y; } };
struct empty {};
struct left : empty { int l; };
struct right { long r; };
struct multi : left, right { char m; };
struct vbase { int vb; virtual void f(); };
struct vleft : virtual vbase { int vl; };
struct vright : virtual vbase { int vr; };
struct diamond : vleft, vright { int d; };
template <typename T, int N> struct box { T v[N]; box *next; static const int n = N; };
struct alignas(32) wide { char c; };
struct holder : base {
	std::vector<point> pts;
	std::map<std::string, int> names;
	std::unique_ptr<int> up;
	int (*fp)(const char *, ...);
	int point::*pm;
	void (point::*mfp)(int);
	int &(*rf)();
	unsigned bits : 3, more : 7;
	static int counter;
	char grid[2][3];
	struct inner { long q; } in;
	box<short, 3> bs;
	wide w;
	[[no_unique_address]] empty e;
	union { int iu; float fu; };
};
base::~base() {}
void vbase::f() {}
int holder::counter;
holder h;
multi mu;
diamond di;
box<point, 2> bp;
}
