/* tests/cuda/cuda_md_kernels.cu - MDRange kernels of the Cuda MDRange suite; see
 * cuda_md_kernels.h. */
#include "cuda_md_kernels.h"

#define LIN2(a, i, j)       (((i) - (a)->lower[0]) * (a)->ext[1] + ((j) - (a)->lower[1]))
#define LIN3(a, i, j, k)    (LIN2(a, i, j) * (a)->ext[2] + ((k) - (a)->lower[2]))
#define LIN4(a, i, j, k, l) (LIN3(a, i, j, k) * (a)->ext[3] + ((l) - (a)->lower[3]))

PX_FOR_2D(k_md_count2, md_count_args, i, j, a)
{
    a->cnt[LIN2(a, i, j)] += 1;
}
PX_FOR_3D(k_md_count3, md_count_args, i, j, k, a)
{
    a->cnt[LIN3(a, i, j, k)] += 1;
}
PX_FOR_4D(k_md_count4, md_count_args, i, j, k, l, a)
{
    a->cnt[LIN4(a, i, j, k, l)] += 1;
}

PX_REDUCE_2D(k_md_sum2, md_val_args, double, i, j, a, acc)
{
    (void)a;
    *acc += (double)(i * 3 + j);
}
PX_REDUCE_3D(k_md_sum3, md_val_args, double, i, j, k, a, acc)
{
    (void)a;
    *acc += (double)(i * 5 + j * 3 + k);
}
PX_REDUCE_3D(k_md_fsum3, md_val_args, double, i, j, k, a, acc)
{
    (void)a;
    *acc += 1.0 / (double)(1 + i * 7 + j * 3 + k);
}

PX_FOR_3D(k_md_stencil, md_stencil_args, i, j, k, a)
{
    if (i == 0 || j == 0 || k == 0 || i == a->in.extent[0] - 1 || j == a->in.extent[1] - 1 ||
        k == a->in.extent[2] - 1)
        return;
    PX_VIEW_AT3(a->out, double, i, j, k) =
        (PX_VIEW_AT3(a->in, double, i - 1, j, k) + PX_VIEW_AT3(a->in, double, i + 1, j, k) +
         PX_VIEW_AT3(a->in, double, i, j - 1, k) + PX_VIEW_AT3(a->in, double, i, j + 1, k) +
         PX_VIEW_AT3(a->in, double, i, j, k - 1) + PX_VIEW_AT3(a->in, double, i, j, k + 1)) /
        6.0;
}
