/* core/tools_sections.c - profile sections (px_profile_*_section, parex/profiling.h;
 * Kokkos::Profiling::createProfileSection and friends): a process-wide table of sections with
 * one id per loaded library. Sections exist whether or not a tool is loaded. */
#include <pthread.h>
#include <string.h>

#include "base/alloc.h"
#include "base/log.h"
#include "core/tools_load.h"
#include "core/tools_sections.h"
#include "parex/profiling.h"

/* Section ids index this table; a destroyed slot is reused. Owned by section_lock. The
 * library callbacks run under lib_lock, taken inside section_lock (never the other way).
 * Destroyed slots form a LIFO free list threaded through next_free, and slots never used lie
 * at n_touched and above, so create and destroy take constant time (amortized over the
 * table's doubling) however many sections are live. */
#define NO_SECTION UINT32_MAX
typedef struct section {
    int used;
    uint32_t next_free; /* next destroyed slot when !used, else unused */
    uint32_t lib_ids[MAX_LIBS];
} section;

static pthread_mutex_t section_lock = PTHREAD_MUTEX_INITIALIZER;
static section *sections;
static uint32_t n_sections;             /* capacity of sections */
static uint32_t n_touched;              /* slots 0..n_touched-1 were handed out at least once */
static uint32_t free_head = NO_SECTION; /* most recently destroyed slot */

void pxi_tools_sections_free(void)
{
    pthread_mutex_lock(&section_lock);
    pxi_free(sections);
    sections = NULL;
    n_sections = 0;
    n_touched = 0;
    free_head = NO_SECTION;
    pthread_mutex_unlock(&section_lock);
}

/* A slot for a new section, or NO_SECTION when the table cannot grow. Caller holds
 * section_lock. */
static uint32_t section_take_slot(void)
{
    if (free_head != NO_SECTION) {
        uint32_t slot = free_head;
        free_head = sections[slot].next_free;
        return slot;
    }
    if (n_touched == n_sections) {
        if (n_sections >= NO_SECTION / 2)
            return NO_SECTION; /* ids are uint32_t and NO_SECTION is reserved */
        uint32_t nn = n_sections ? 2 * n_sections : 16;
        section *ns = pxi_calloc(nn, sizeof *ns);
        if (!ns)
            return NO_SECTION;
        if (n_sections)
            memcpy(ns, sections, n_sections * sizeof *ns);
        pxi_free(sections);
        sections = ns;
        n_sections = nn;
    }
    return n_touched++;
}

int px_profile_create_section(const char *name, uint32_t *id)
{
    if (!name || !id) {
        PXI_ERROR("px_profile_create_section: %s is NULL", !name ? "name" : "id");
        return PX_EFAULT;
    }
    if (!name[0]) {
        PXI_ERROR("px_profile_create_section: name is empty");
        return PX_EINVAL;
    }
    if (!pxi_tools_ready()) {
        PXI_ERROR("px_profile_create_section(\"%s\"): the runtime is not initialized", name);
        return PX_ENOTINIT;
    }
    pthread_mutex_lock(&section_lock);
    uint32_t slot = section_take_slot();
    if (slot == NO_SECTION) {
        pthread_mutex_unlock(&section_lock);
        PXI_ERROR("px_profile_create_section(\"%s\"): out of memory", name);
        return PX_ENOMEM;
    }
    section *sec = &sections[slot];
    memset(sec, 0, sizeof *sec);
    sec->used = 1;
    if (pxi_tool_lib_mask[KP_CREATE_SECTION]) {
        pxi_tool_lib_enter();
        for (int i = 0; i < pxi_tool_n_libs; ++i) {
            kp_create_section_fn fn =
                LIB_FN(&pxi_tool_libs[i], KP_CREATE_SECTION, kp_create_section_fn);
            if (fn)
                fn(name, &sec->lib_ids[i]);
        }
        pxi_tool_lib_leave();
    }
    pthread_mutex_unlock(&section_lock);
    *id = slot;
    return PX_OK;
}

static int section_call(uint32_t id, int which, const char *caller)
{
    if (!pxi_tools_ready()) {
        PXI_ERROR("%s(%u): the runtime is not initialized", caller, (unsigned)id);
        return PX_ENOTINIT;
    }
    pthread_mutex_lock(&section_lock);
    if (id >= n_sections || !sections[id].used) {
        pthread_mutex_unlock(&section_lock);
        PXI_ERROR("%s(%u): no such section (never created, or destroyed)", caller, (unsigned)id);
        return PX_EINVAL;
    }
    if (pxi_tool_lib_mask[which]) {
        pxi_tool_lib_enter();
        for (int i = 0; i < pxi_tool_n_libs; ++i) {
            kp_section_fn fn = LIB_FN(&pxi_tool_libs[i], which, kp_section_fn);
            if (fn)
                fn(sections[id].lib_ids[i]);
        }
        pxi_tool_lib_leave();
    }
    if (which == KP_DESTROY_SECTION) {
        sections[id].used = 0;
        sections[id].next_free = free_head;
        free_head = id;
    }
    pthread_mutex_unlock(&section_lock);
    return PX_OK;
}

int px_profile_start_section(uint32_t id)
{
    return section_call(id, KP_START_SECTION, "px_profile_start_section");
}

int px_profile_stop_section(uint32_t id)
{
    return section_call(id, KP_STOP_SECTION, "px_profile_stop_section");
}

int px_profile_destroy_section(uint32_t id)
{
    return section_call(id, KP_DESTROY_SECTION, "px_profile_destroy_section");
}
