/* core/registry.c - the execution-space registry. Spaces are added before main by their
 * PX_REGISTER_SPACE constructors (single-threaded by then), kept sorted by priority, and
 * initialized in ascending priority order, finalized in descending order. */
#include "core/registry.h"

#include <string.h>

#include "base/log.h"
#include "core/settings.h"

#define MAX_SPACES 16

static struct px_space spaces[MAX_SPACES];
static int n_spaces;

void pxi_registry_add(const pxi_space_ops *ops)
{
    for (int i = 0; i < n_spaces; ++i)
        if (strcmp(spaces[i].ops->name, ops->name) == 0)
            return;
    if (n_spaces == MAX_SPACES) {
        fprintf(stderr, "parex: too many execution spaces registered; '%s' ignored\n", ops->name);
        return;
    }
    /* Insertion sort by ascending priority (registration order is link order, not meaningful). */
    int at = n_spaces;
    while (at > 0 && spaces[at - 1].ops->priority > ops->priority) {
        spaces[at] = spaces[at - 1];
        --at;
    }
    spaces[at] = (struct px_space){.ops = ops, .available = 0, .instance_id = 0};
    ++n_spaces;
}

int pxi_registry_count(void)
{
    return n_spaces;
}

px_space *pxi_registry_at(int i)
{
    return (i >= 0 && i < n_spaces) ? &spaces[i] : NULL;
}

int pxi_registry_device_id(const px_space *s)
{
    return s && s->ops->device_id ? s->ops->device_id() : 0;
}

px_space *pxi_registry_device_space(void)
{
    for (int i = 0; i < n_spaces; ++i)
        if (spaces[i].available && !spaces[i].ops->host_accessible && spaces[i].ops->stream_create)
            return &spaces[i];
    return NULL;
}

/* The backends' share of the configuration. */
static pxi_space_config space_config(const pxi_config *c)
{
    pxi_space_config sc = {
        .num_threads = c->num_threads, .device_id = c->device_id, .debug_check = c->debug_check};
    snprintf(sc.bind, sizeof sc.bind, "%s", c->bind);
    return sc;
}

int pxi_registry_initialize(const pxi_config *cfg)
{
    const pxi_space_config sc = space_config(cfg);
    for (int i = 0; i < n_spaces; ++i) {
        struct px_space *s = &spaces[i];
        s->available = 0;
        int rc = s->ops->initialize(&sc);
        if (rc == PX_OK) {
            s->available = 1;
            PXI_DEBUG("space '%s' initialized", s->ops->name);
        } else if (rc == PX_ENODEV) {
            PXI_INFO("space '%s' is not available on this machine", s->ops->name);
        } else {
            PXI_ERROR("px_initialize: space '%s' failed to initialize: %s", s->ops->name,
                      px_strerror(rc));
            for (int j = i - 1; j >= 0; --j) {
                if (spaces[j].available)
                    (void)spaces[j].ops->finalize();
                spaces[j].available = 0;
            }
            return rc;
        }
    }
    return PX_OK;
}

int pxi_registry_finalize(void)
{
    int first = PX_OK;
    for (int i = n_spaces - 1; i >= 0; --i) {
        struct px_space *s = &spaces[i];
        if (!s->available)
            continue;
        int rc = s->ops->finalize();
        if (rc != PX_OK) {
            PXI_ERROR("px_finalize: space '%s' failed to finalize: %s", s->ops->name,
                      px_strerror(rc));
            if (first == PX_OK)
                first = rc;
        }
        s->available = 0;
    }
    return first;
}

/* Written by px_initialize before the runtime is marked up (release) and by px_finalize after it
 * is marked down; readers reach it after an acquire of the runtime state. */
static px_space *default_space;

void pxi_registry_set_default(px_space *s)
{
    default_space = s;
}

px_space *pxi_registry_default(void)
{
    return default_space;
}
