/* policy/range.c - range-policy validation and chunk arithmetic (see policy/range.h). */
#include "policy/range.h"

#include "base/log.h"

px_range_policy px_range(int64_t begin, int64_t end)
{
    px_range_policy p = {begin, end, 0, PX_SCHEDULE_STATIC};
    return p;
}

px_range_policy px_range_chunked(int64_t begin, int64_t end, int64_t chunk_size,
                                 px_schedule schedule)
{
    px_range_policy p = {begin, end, chunk_size, schedule};
    return p;
}

/* end - begin without overflow: returns 0 and sets *n, or -1 when it does not fit. */
static int range_size(int64_t begin, int64_t end, int64_t *n)
{
    if (begin > end)
        return -1;
    if (begin < 0 && end > INT64_MAX + begin)
        return -1;
    *n = end - begin;
    return 0;
}

int px_range_validate(px_range_policy p)
{
    int64_t n;
    if (p.begin > p.end || p.chunk_size < 0 || range_size(p.begin, p.end, &n) != 0)
        return PX_EINVAL;
    if (p.schedule != PX_SCHEDULE_STATIC && p.schedule != PX_SCHEDULE_DYNAMIC)
        return PX_EINVAL;
    return PX_OK;
}

int pxi_range_check(const px_range_policy *p, const char *what)
{
    int64_t n;
    if (p->begin > p->end) {
        PXI_ERROR("%s: range begin %lld > end %lld", what, (long long)p->begin, (long long)p->end);
        return PX_EINVAL;
    }
    if (range_size(p->begin, p->end, &n) != 0) {
        PXI_ERROR("%s: range [%lld, %lld) has more than INT64_MAX indices", what,
                  (long long)p->begin, (long long)p->end);
        return PX_EINVAL;
    }
    if (p->chunk_size < 0) {
        PXI_ERROR("%s: negative chunk size %lld", what, (long long)p->chunk_size);
        return PX_EINVAL;
    }
    if (p->schedule != PX_SCHEDULE_STATIC && p->schedule != PX_SCHEDULE_DYNAMIC) {
        PXI_ERROR("%s: unknown schedule %d", what, (int)p->schedule);
        return PX_EINVAL;
    }
    return PX_OK;
}

int64_t px_range_auto_chunk(int64_t n, int workers, px_schedule schedule)
{
    if (workers < 1)
        workers = 1;
    if (n <= 0 || schedule != PX_SCHEDULE_DYNAMIC)
        return 1;
    /* About eight chunks per worker: enough for late workers to even out an imbalance, few
     * enough that claiming costs little against the chunk's work. */
    int64_t c = n / (8 * (int64_t)workers);
    if (c < 1)
        c = 1;
    if (c > 65536)
        c = 65536;
    return c;
}

void pxi_range_static_block(int64_t begin, int64_t end, int64_t chunk, int rank, int nranks,
                            int64_t *b, int64_t *e)
{
    int64_t n = end - begin;
    int64_t nc = pxi_range_num_chunks(n, chunk);
    int64_t k0, k1;
    pxi_range_static_chunks(nc, rank, nranks, &k0, &k1);
    if (k0 >= k1) {
        *b = *e = (k0 >= nc) ? end : begin + k0 * chunk;
        return;
    }
    int64_t tmp;
    pxi_range_chunk_bounds(begin, end, chunk, k0, b, &tmp);
    pxi_range_chunk_bounds(begin, end, chunk, k1 - 1, &tmp, e);
}
