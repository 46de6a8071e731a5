/*
 * hooks_int.h - private helpers of server_hooks/ shared between its files.
 */
#ifndef PDC_CKPT_HOOKS_INT_H
#define PDC_CKPT_HOOKS_INT_H

#include "ckpt_store.h"

/* shared.c: node-local store with a shared copy */
int ckpt_shared_publish(ckpt_store *st, const char *shared_root, int rank);
/* Exported (CKPT_API) only because libckpt_hooks_mpi's re-homing calls it;
 * not in an installed header. */
CKPT_API int ckpt_shared_restore(const char *local_root, const char *shared_root, int rank);

#endif
