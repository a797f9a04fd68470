/* core/engine/bulk.h - bulk execution at push (MXNet's bulk segments; bulk.c, push.c).
 *
 * Why: a chain of one-Var sync writes handed to a worker cost one op block (4 cache lines) and
 * one Var queue link per op, written by the pusher and read by the worker on the other core
 * (bench/RESULTS.md, "Session 8: hand-off"). A bulk block carries many such ops: per op only
 * its 24-byte entry crosses the cores, and the worker takes the Var once per block.
 */
#ifndef PXI_ENGINE_BULK_H
#define PXI_ENGINE_BULK_H

#include "core/engine/engine_impl.h"

/* Bulk execution (MXNet's bulk segments, at push; bulk.c, pxi_bulk_append; push.c, run_bulk): a
 * sync op whose only Var is a write, pushed while that Var's last queued dep is a bulk block's that
 * no thread has started, becomes one more entry of that block instead of a block of its own. The
 * block's first op is the block's own (sfn, arg, name); the entries follow it in push order in
 * the space of deps[1..], and the worker that runs the block runs them all, back to back.
 * state: the entries appended (low bits) and PXI_BULK_SEALED, set by the thread that starts
 * the block; a pusher (holding the Var's lock, the block being its tail) writes entry k, then
 * publishes it by moving state from k to k + 1 (release), which fails once the block is
 * sealed: the runner's acquire of the seal sees every entry it counts. */
typedef struct pxi_bulk_entry {
    px_sync_fn fn;
    void *arg;
    const char *name;
} pxi_bulk_entry;

typedef struct pxi_bulk {
    atomic_uint state;
    uint32_t cap; /* entries that fit */
    pxi_bulk_entry entry[];
} pxi_bulk;

#define PXI_BULK_SEALED 0x80000000u

/* The entries of bulk block @o (pxi_opr.bulk set). */
static inline pxi_bulk *pxi_opr_bulk(struct pxi_opr *o)
{
    return (pxi_bulk *)(void *)&o->deps[1];
}

/* Bulk blocks come from this pool class: its 63 spare deps hold 83 entries. */
#define PXI_BULK_CLASS 2

/* Append public push @p's op (a normal CPU sync op whose only Var is a write, from outside any
 * op) to the bulk block at the tail of its Var's queue: 1 when it joined it, 0 when the Var is
 * gone or its tail is not a bulk block of the same device and priority that no thread has
 * started and that has room (the caller then pushes a block of its own). The caller holds an
 * in-flight slot for the op, which the entry keeps. Takes the Var's lock. */
PX_NODISCARD int pxi_bulk_append(pxi_engine *e, const pxi_push *p);

/* Make @o, a block of class PXI_BULK_CLASS just filled for a push of one write, a bulk block
 * with no entries yet (before the push publishes it). */
void pxi_bulk_init(pxi_opr *o);

#endif
