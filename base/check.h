/* base/check.h - assertions and "cannot happen" guards (STYLE.md section 7).
 * PX_ASSERT checks in checking builds (PXI_CHECKING=1: Debug and sanitizer builds) and costs
 * nothing otherwise, yet stays type-checked. PX_ALWAYS/PX_NEVER (SQLite's ALWAYS/NEVER) assert
 * in checking builds and evaluate to the condition in release, so callers return a status
 * instead of killing a user's job. Caller input is never asserted. */
#ifndef PXI_CHECK_H
#define PXI_CHECK_H

#include <stdio.h>
#include <stdlib.h>

#ifndef PXI_CHECKING
#define PXI_CHECKING 0
#endif

#define PX_ASSERT(c)                                                                               \
    do {                                                                                           \
        if (PXI_CHECKING && !(c)) {                                                                \
            fprintf(stderr, "parex: assertion failed: %s (%s:%d)\n", #c, __FILE__, __LINE__);      \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

static inline int pxi_check_fail(const char *what, const char *file, int line)
{
    if (PXI_CHECKING) {
        fprintf(stderr, "parex: invariant failed: %s (%s:%d)\n", what, file, line);
        abort();
    }
    return 0;
}
#define PX_ALWAYS(c) ((c) ? 1 : pxi_check_fail("ALWAYS(" #c ")", __FILE__, __LINE__))
#define PX_NEVER(c)  ((c) ? !pxi_check_fail("NEVER(" #c ")", __FILE__, __LINE__) : 0)

#define PX_UNREACHABLE()                                                                           \
    do {                                                                                           \
        fprintf(stderr, "parex: unreachable state (%s:%d)\n", __FILE__, __LINE__);                 \
        abort();                                                                                   \
    } while (0)

#if defined(__GNUC__)
#define PX_NODISCARD    __attribute__((warn_unused_result))
#define PXI_LIKELY(x)   ((int)__builtin_expect(!!(x), 1))
#define PXI_UNLIKELY(x) ((int)__builtin_expect(!!(x), 0))
#else
#define PX_NODISCARD
#define PXI_LIKELY(x)   (x)
#define PXI_UNLIKELY(x) (x)
#endif

#define PXI_CACHE_LINE 64

#endif
