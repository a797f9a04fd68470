/* core/memory.c - px_malloc / px_free / px_deep_copy over the spaces' memory ops. */
#include "parex/memory.h"
#include "base/log.h"
#include "core/memory.h"
#include "core/registry.h"
#include "core/runtime.h"
#include "core/tools.h"

/* Nonzero (logged, *rc = PX_ENOTINIT) before px_initialize or in a forked child: checked
 * before the arguments, because before initialize no space pointer can be right, and "space
 * is NULL" would send a user hunting for the wrong mistake. */
static int runtime_missing(const char *caller, int *rc)
{
    *rc = PX_ENOTINIT;
    if (pxi_runtime_lost_to_fork(caller))
        return 1;
    if (!pxi_runtime_ready()) {
        PXI_ERROR("%s: the runtime is not initialized (call px_initialize first)", caller);
        return 1;
    }
    *rc = PX_OK;
    return 0;
}

void *px_malloc(px_space *s, size_t bytes)
{
    int rc;
    if (runtime_missing("px_malloc", &rc))
        return NULL;
    if (!s) {
        PXI_ERROR("px_malloc(%zu bytes): space is NULL", bytes);
        return NULL;
    }
    if (!pxi_space_resolve(s, "px_malloc", &rc))
        return NULL;
    void *p = s->ops->malloc(bytes);
    if (!p) {
        PXI_ERROR("px_malloc: out of memory allocating %zu bytes in space '%s'", bytes,
                  s->ops->name);
        return NULL;
    }
    if (pxi_tools_active())
        pxi_tools_allocate(s, "px_malloc", p, bytes);
    return p;
}

int px_free(px_space *s, void *p)
{
    int rc;
    if (runtime_missing("px_free", &rc))
        return rc;
    if (!s) {
        PXI_ERROR("px_free(%p): space is NULL", p);
        return PX_EFAULT;
    }
    if (!pxi_space_resolve(s, "px_free", &rc))
        return rc;
    if (!p)
        return PX_OK;
    if (pxi_tools_active())
        pxi_tools_deallocate(s, "px_malloc", p, 0);
    return s->ops->free(p);
}

int px_deep_copy(px_space *dst_s, void *dst, px_space *src_s, const void *src, size_t bytes)
{
    int rc;
    if (runtime_missing("px_deep_copy", &rc))
        return rc;
    if (!dst_s || !src_s) {
        PXI_ERROR("px_deep_copy(%zu bytes): %s space is NULL", bytes,
                  dst_s ? "source" : "destination");
        return PX_EFAULT;
    }
    if (!pxi_space_resolve(dst_s, "px_deep_copy", &rc) ||
        !pxi_space_resolve(src_s, "px_deep_copy", &rc))
        return rc;
    if (bytes == 0)
        return PX_OK;
    if (!dst || !src) {
        PXI_ERROR("px_deep_copy(%zu bytes): %s pointer is NULL", bytes,
                  dst ? "source" : "destination");
        return PX_EFAULT;
    }
    int tools = pxi_tools_active();
    if (tools)
        pxi_tools_begin_deep_copy(dst_s, dst, src_s, src, bytes);
    /* The space that is not host accessible moves the bytes (it knows its device); between two
     * host spaces the destination's op copies. */
    px_space *mover = !src_s->ops->host_accessible ? src_s : dst_s;
    rc = mover->ops->deep_copy(dst, dst_s->ops->host_accessible, src, src_s->ops->host_accessible,
                               bytes);
    if (tools)
        pxi_tools_end_deep_copy();
    return rc;
}

/* Labeled allocation for containers (core/view.c): like px_malloc, but tools see the
 * container's label instead of "px_malloc", and the caller gets a status. */
void *pxi_memory_alloc(px_space *s, const char *caller, const char *label, size_t bytes,
                       int *status)
{
    s = pxi_space_resolve(s, caller, status);
    if (!s)
        return NULL;
    void *p = s->ops->malloc(bytes);
    if (!p) {
        PXI_ERROR("%s('%s'): out of memory allocating %zu bytes in space '%s'", caller, label,
                  bytes, s->ops->name);
        *status = PX_ENOMEM;
        return NULL;
    }
    if (pxi_tools_active())
        pxi_tools_allocate(s, label, p, bytes);
    *status = PX_OK;
    return p;
}

int pxi_memory_free(px_space *s, const char *label, void *p, size_t bytes)
{
    if (!p)
        return PX_OK;
    if (pxi_tools_active())
        pxi_tools_deallocate(s, label, p, bytes);
    return s->ops->free(p);
}
