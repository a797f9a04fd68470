/* core/space.c - the space API of parex/space.h: the default space, lookups by name, the
 * concurrency and accessibility queries and fences (a launch's space argument is resolved by
 * core/space_resolve.c, below this file and core/instance.c). core/init.c chooses the default
 * space at px_initialize and clears it at px_finalize (core/space.h). */
#include <stdio.h>
#include <string.h>

#include "base/log.h"
#include "core/instance.h"
#include "core/registry.h"
#include "core/runtime.h"
#include "core/space.h"
#include "core/tools.h"
#include "parex/core.h"
#include "parex/space.h"

static px_space *choose_default(const char *name)
{
    if (name && *name) {
        for (int i = 0; i < pxi_registry_count(); ++i) {
            px_space *s = pxi_registry_at(i);
            if (strcmp(s->ops->name, name) == 0)
                return s->available ? s : NULL;
        }
        return NULL;
    }
    for (int i = pxi_registry_count() - 1; i >= 0; --i) {
        px_space *s = pxi_registry_at(i);
        if (s->available)
            return s;
    }
    return NULL;
}

px_space *pxi_space_choose_default(const char *name)
{
    /* Kept by the registry (pxi_registry_default), which the tools layer reads too; readers
     * check pxi_runtime_ready first, whose acquire pairs with init.c's release store. */
    px_space *d = choose_default(name);
    pxi_registry_set_default(d);
    return d;
}

void pxi_space_clear_default(void)
{
    pxi_registry_set_default(NULL);
}

int pxi_space_is_default(const px_space *s)
{
    return s && s == pxi_registry_default();
}

px_space *px_default_space(void)
{
    return pxi_runtime_ready() ? pxi_registry_default() : NULL;
}

px_space *px_space_by_name(const char *name)
{
    if (!name) {
        PXI_INFO("px_space_by_name: NULL name");
        return NULL;
    }
    if (!pxi_runtime_ready()) {
        PXI_INFO("px_space_by_name(\"%s\"): the runtime is not initialized", name);
        return NULL;
    }
    for (int i = 0; i < pxi_registry_count(); ++i) {
        px_space *s = pxi_registry_at(i);
        if (strcmp(s->ops->name, name) == 0) {
            if (!s->available)
                PXI_INFO("px_space_by_name(\"%s\"): built in but not available on this machine",
                         name);
            return s->available ? s : NULL;
        }
    }
    /* A typo here is easy to miss: the NULL it returns means the default space to every call
     * that takes a space, so say it at warn level with the names that would have worked. */
    char known[256];
    size_t used = 0;
    known[0] = '\0';
    for (int i = 0; i < pxi_registry_count() && used < sizeof known; ++i) {
        const px_space *s = pxi_registry_at(i);
        int n = snprintf(known + used, sizeof known - used, "%s\"%s\"%s", i ? ", " : "",
                         s->ops->name, s->available ? "" : " (not available here)");
        if (n < 0)
            break;
        used += (size_t)n;
    }
    PXI_WARN("px_space_by_name(\"%s\"): unknown space name; known spaces: %s (NULL means the "
             "default space to calls that take a space: check the name)",
             name, known);
    return NULL;
}

const char *px_space_name(const px_space *s)
{
    return s ? s->ops->name : "(null)";
}

int px_space_concurrency(const px_space *s)
{
    if (!s) {
        PXI_ERROR("px_space_concurrency: space is NULL");
        return PX_EFAULT;
    }
    if (pxi_runtime_lost_to_fork("px_space_concurrency"))
        return PX_ENOTINIT;
    if (!pxi_runtime_ready()) {
        PXI_ERROR("px_space_concurrency(%s): the runtime is not initialized", s->ops->name);
        return PX_ENOTINIT;
    }
    if (!s->available) {
        PXI_ERROR("px_space_concurrency(%s): the space is not available", s->ops->name);
        return PX_ENODEV;
    }
    return pxi_space_concurrency_of(s);
}

int px_space_host_accessible(const px_space *s)
{
    return s ? s->ops->host_accessible : 0;
}

static int fence_one(px_space *s)
{
    uint64_t fid = 0;
    int tools = pxi_tools_active();
    if (tools)
        fid = pxi_tools_begin_fence("px_fence", s);
    int rc = pxi_space_fence_of(s);
    if (tools)
        pxi_tools_end_fence(fid);
    return rc;
}

int px_fence(px_space *s)
{
    if (pxi_runtime_lost_to_fork("px_fence"))
        return PX_ENOTINIT;
    if (!pxi_runtime_ready()) {
        PXI_ERROR("px_fence: the runtime is not initialized");
        return PX_ENOTINIT;
    }
    if (s) {
        if (!s->available) {
            PXI_ERROR("px_fence: space '%s' is not available", s->ops->name);
            return PX_ENODEV;
        }
        if (s->ops->in_kernel && s->ops->in_kernel()) {
            PXI_ERROR("px_fence: called from inside a kernel of space '%s'", s->ops->name);
            return PX_EDEADLK;
        }
        return fence_one(s);
    }
    if (pxi_space_any_in_kernel()) {
        PXI_ERROR("px_fence: called from inside a kernel");
        return PX_EDEADLK;
    }
    int first = PX_OK;
    for (int i = 0; i < pxi_registry_count(); ++i) {
        px_space *sp = pxi_registry_at(i);
        if (!sp->available)
            continue;
        int rc = fence_one(sp);
        if (rc != PX_OK && first == PX_OK)
            first = rc;
    }
    int rc = pxi_instance_fence_all(); /* core/instance.c */
    return first == PX_OK ? rc : first;
}
