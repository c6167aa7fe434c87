/*
 * The reverse leg: libnccom imports all of the spec's callbacks @NRT_2.0.0
 * (docs/sources.md#s001-4), whether or not this reference calls each one, so its link
 * carries the whole surface the shipped library binds (nrtabi check, role
 * libnccom). The list is the generated header's, so it follows the release.
 */
#include "nccom.h"

#define NCCOM_REF_IMPORT(f) (void (*)(void))f,
__attribute__((used)) static void (*const nccom_ref_imports[])(void) = {
	NRTABI_REVERSE_CALLBACKS(NCCOM_REF_IMPORT)
};
