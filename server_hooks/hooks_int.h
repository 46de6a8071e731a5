/*
 * hooks_int.h - private helpers of server_hooks/ shared between its files.
 */
#ifndef PDC_CKPT_HOOKS_INT_H
#define PDC_CKPT_HOOKS_INT_H

#include "ckpt_hooks.h"
#include "ckpt_store.h"

/* hooks.c: *dst = the caller's options, the fields a smaller (older)
 * struct lacks at their defaults; CKPT_E_INVAL for NULL or an unknown
 * size field. Exported (CKPT_API) only for libckpt_hooks_mpi, as below. */
CKPT_API int ckpt_hooks_opts_get(struct ckpt_hooks_opts *dst, const struct ckpt_hooks_opts *o);

/* shared.c: node-local store with a shared copy */
int ckpt_shared_publish(ckpt_store *st, const char *shared_root, int rank);
/* Exported (CKPT_API) only because libckpt_hooks_mpi's re-homing calls it;
 * not in an installed header. */
CKPT_API int ckpt_shared_restore(const char *local_root, const char *shared_root, int rank);

#endif
