#ifndef NRTABI_RUNTIME_TRAMPOLINES_H
#define NRTABI_RUNTIME_TRAMPOLINES_H

#include "nrt_slots.h"

/* Fill *t with the trampolines, slot by slot (trampolines.c). */
void nrt_trampoline_table(struct nrt_nccl_slots *t);

#endif
