/*
 * fuzz_check.h - the one assertion the fuzz harnesses use. A failed check
 * names itself on stderr and traps, which libFuzzer reports as a crash
 * (and saves the input) and which fails a ctest replay, in any build type
 * (assert() would vanish under NDEBUG).
 */
#ifndef PDC_CKPT_FUZZ_CHECK_H
#define PDC_CKPT_FUZZ_CHECK_H

#include <stdio.h>

#define FZ_CHECK(cond)                                                         \
    do {                                                                       \
        if (!(cond))                                                           \
            fz_check_failed(#cond, __FILE__, __LINE__);                        \
    } while (0)

__attribute__((noreturn)) static inline void fz_check_failed(const char *what, const char *file,
                                                            int line)
{
    fprintf(stderr, "fuzz check failed: %s (%s:%d)\n", what, file, line);
    fflush(stderr);
    __builtin_trap();
}

#endif /* PDC_CKPT_FUZZ_CHECK_H */
