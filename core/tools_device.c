/* core/tools_device.c - Kokkos Tools device ids: how a parex space is encoded in the 32-bit
 * deviceID that every kokkosp_* kernel and fence callback receives (Kokkos'
 * Tools::Experimental::device_id encoding), used by event dispatch (core/tools.c) and by the
 * device table handed to tools at kokkosp_init (core/tools_load.c). */
#include "core/registry.h"
#include "core/tools.h"

/* Kokkos: 8 bits device type, 7 bits device id, 17 bits instance. Instance ids start at 1
 * (Kokkos reserves 0 for "all instances" of a device, its global-fence id). */
#define KP_INSTANCE_BITS      17
#define KP_DEVICE_BITS        7
#define KP_RESERVED_INSTANCES 1
#define KP_DEVICE_TYPE_CUDA   2

uint32_t pxi_tools_device_id(const px_space *s)
{
    /* NULL: every instance of the default space's device, Kokkos' id for a global fence. */
    int all = s == NULL;
    if (all)
        s = pxi_registry_default();
    if (!s)
        return 0;
    uint32_t type = (uint32_t)s->ops->kokkos_device_type & 0xffu;
    uint32_t dev = 0;
    if (s->ops->kokkos_device_type == KP_DEVICE_TYPE_CUDA) {
        int d = pxi_registry_device_id(s);
        dev = d > 0 ? (uint32_t)d & ((1u << KP_DEVICE_BITS) - 1) : 0;
    }
    uint32_t inst =
        all ? 0
            : ((uint32_t)s->instance_id + KP_RESERVED_INSTANCES) & ((1u << KP_INSTANCE_BITS) - 1);
    return (type << 24) | (dev << KP_INSTANCE_BITS) | inst;
}
