/* The generated slot table, sentinel and trampolines of the release that
 * release.go puts on the include path, compiled into this package. */
#include "nrt_slots.c"
