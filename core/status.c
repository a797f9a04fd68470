/* core/status.c - names of status codes. */
#include "parex/core.h"

const char *px_strerror(int status)
{
    switch (status) {
    case PX_OK:
        return "PX_OK: success";
    case PX_EINVAL:
        return "PX_EINVAL: invalid argument";
    case PX_ENOMEM:
        return "PX_ENOMEM: out of memory";
    case PX_ENOSYS:
        return "PX_ENOSYS: feature not built into this library";
    case PX_EDEADLK:
        return "PX_EDEADLK: the wait would deadlock (called from inside an op or kernel)";
    case PX_ENODEV:
        return "PX_ENODEV: execution space or device not available";
    case PX_ENOTINIT:
        return "PX_ENOTINIT: runtime not initialized";
    case PX_EALREADY:
        return "PX_EALREADY: runtime already initialized";
    case PX_EBUSY:
        return "PX_EBUSY: object in use";
    case PX_ECUDA:
        return "PX_ECUDA: CUDA runtime error";
    case PX_EIO:
        return "PX_EIO: input/output error";
    case PX_ECANCELED:
        return "PX_ECANCELED: operation cancelled";
    case PX_EFAULT:
        return "PX_EFAULT: NULL pointer where an object is required";
    case PX_EMPI:
        return "PX_EMPI: MPI error or MPI not usable";
    default:
        return status < 0 ? "user or unknown parex status" : "unknown parex status";
    }
}
