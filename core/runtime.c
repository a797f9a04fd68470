/* core/runtime.c - the runtime's lifecycle state (core/runtime.h), apart from the lifecycle
 * code that changes it (core/init.c), so that the engine and the space API can ask "is the
 * runtime up, or is this a forked child?" without calling up into px_initialize's file. */
#include "core/runtime.h"

#include "base/log.h"

atomic_int pxi_runtime_state;

int pxi_runtime_report_fork(const char *caller)
{
    PXI_ERROR("%s: this process was forked while its parent's parex runtime was up; the runtime "
              "does not survive fork() (its worker threads exist only in the parent), so parex "
              "calls in this child return PX_ENOTINIT",
              caller);
    return 1;
}

_Thread_local int pxi_exec_rank;
