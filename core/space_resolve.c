/* core/space_resolve.c - what every space-taking call does first: resolve its space argument
 * (NULL means the default space) against the runtime's state, and the in-kernel test of all
 * registered spaces. It sits below core/space.c (the public space API) and core/instance.c
 * (instances), which both use it; it calls only the registry and the runtime. */
#include "base/log.h"
#include "core/registry.h"
#include "core/runtime.h"
#include "core/space.h"
#include "parex/core.h"

int pxi_space_any_in_kernel(void)
{
    for (int i = 0; i < pxi_registry_count(); ++i) {
        px_space *s = pxi_registry_at(i);
        if (s->available && s->ops->in_kernel && s->ops->in_kernel())
            return 1;
    }
    return 0;
}

px_space *pxi_space_resolve(px_space *s, const char *caller, int *status)
{
    if (PXI_UNLIKELY(!pxi_runtime_ready())) {
        /* A forked child's runtime is not ready either: it gets its own message. */
        if (!pxi_runtime_lost_to_fork(caller))
            PXI_ERROR("%s: the runtime is not initialized (call px_initialize first)", caller);
        *status = PX_ENOTINIT;
        return NULL;
    }
    if (!s)
        s = pxi_registry_default();
    if (!s || !s->available) {
        PXI_ERROR("%s: the execution space '%s' is not available", caller,
                  s ? s->ops->name : "(default)");
        *status = PX_ENODEV;
        return NULL;
    }
    *status = PX_OK;
    return s;
}
