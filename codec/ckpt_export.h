/*
 * ckpt_export.h - CKPT_API marks the public API of pdc-ckpt's libraries.
 *
 * The libraries are compiled with hidden visibility (-fvisibility=hidden):
 * only what a public header (bulki.h, ckpt_store.h, ckpt_fs.h, ckpt_hooks.h,
 * ckpt_hooks_mpi.h) declares with CKPT_API is exported from the shared
 * libraries, and every such name starts with ckpt_ or bulki_ (the ctest
 * install_exported_symbols checks the built libraries). Static linking is
 * unaffected.
 */
#ifndef PDC_CKPT_EXPORT_H
#define PDC_CKPT_EXPORT_H

#if defined(__GNUC__) || defined(__clang__)
#define CKPT_API __attribute__((visibility("default")))
#else
#define CKPT_API
#endif

#endif
