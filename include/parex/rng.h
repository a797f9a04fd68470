/*
 * parex/rng.h - counter-based random numbers: Philox4x32-10 from Random123 (Kokkos::Random's
 * role, with the stateless, index-keyed streams of curand_init(seed, subsequence) and
 * Random123's own philox4x32 API).
 *
 * The generator is Random123's (D. E. Shaw Research; Debian package librandom123-dev, header
 * only): this header wraps `philox4x32_R(10, ctr, key)` from <Random123/philox.h> and adds no
 * generator of its own. Programs that include parex.h therefore need the Random123 headers on
 * their include path (librandom123-dev on Debian/Ubuntu; the same files from
 * github.com/DEShawResearch/random123 elsewhere). Everything here is `static inline`, so a
 * stream is computed where it is used: in host code, in PX_FOR/PX_REDUCE bodies on serial and
 * threads, and, in .cu files compiled by nvcc, on the device (the functions are then
 * `__host__ __device__`).
 *
 * A stream is named by two 64-bit numbers, (seed, counter):
 *   - Philox key   = { (uint32_t)seed, (uint32_t)(seed >> 32) }
 *   - Philox counter of block b = { (uint32_t)counter, (uint32_t)(counter >> 32),
 *                                   (uint32_t)b, (uint32_t)(b >> 32) }
 * Block b (b = 0, 1, 2, ...) gives four 32-bit words, out[0..3] of philox4x32_R(10, ctr, key).
 * The stream is block 0's words in order out[0], out[1], out[2], out[3], then block 1's, and so
 * on: px_rng_u32 returns the next word; px_rng_uniform_f64 takes two words, px_rng_uniform_f32
 * one, px_rng_normal_f64 four per pair of normals. So px_rng_at(seed, c) followed by four
 * px_rng_u32 calls gives exactly Random123's Philox4x32-10 output for key seed and counter
 * {c_lo, c_hi, 0, 0}, and px_rng_seek(&r, b) reaches any block (Random123's known-answer
 * vectors, with all four counter words set, are reached this way in tests/check_rng.c).
 *
 * Use: one stream per work item, keyed by its index, e.g. in a body
 *         px_rng r = px_rng_at(a->seed, (uint64_t)i);
 *         double x = px_rng_uniform_f64(&r);
 * The numbers a work item sees depend only on (seed, its index), never on the space, the
 * thread count, the schedule or the chunk that ran it: a kernel's result is the same on every
 * space. Distinct counters give disjoint streams (2^64 blocks, 2^66 words each); distinct seeds
 * give independent Philox keys. A px_rng is a plain value (56 bytes): copy it, keep it in
 * registers or on the stack; it needs no allocation and no cleanup.
 *
 * Thread safety: a px_rng is not shared; each thread uses its own (px_rng_at is pure).
 */
#ifndef PAREX_RNG_H
#define PAREX_RNG_H

#include <math.h>
#include <stdint.h>

/* Under nvcc, compile Random123's functions for host and device (its default is device only
 * in the device pass and host only in the host pass, which a __host__ __device__ caller
 * cannot mix). */
#if defined(__CUDACC__) && !defined(R123_CUDA_DEVICE)
#define R123_CUDA_DEVICE __host__ __device__
#endif
#include <Random123/philox.h>

#if defined(__CUDACC__)
#define PXI_RNG_FN static inline __host__ __device__
#else
#define PXI_RNG_FN static inline
#endif

#ifdef __cplusplus
extern "C" {
#endif

/**
 * A position in a Philox4x32-10 stream (see the file comment). A plain value: copy freely.
 * Fields are public for inspection; change them only through the functions below.
 *
 * The unused words of the current block wait in q[0] and q[1] as a queue of 32-bit words, the
 * next one in the low half of q[0] (block words w0..w3 enter as q[0] = w0 | w1 << 32,
 * q[1] = w2 | w3 << 32). Every access to them has a constant index, so a compiler keeps a
 * px_rng that lives in a loop entirely in registers (an array indexed by a running word
 * number would be kept in memory and reloaded on every draw).
 */
typedef struct px_rng {
    uint64_t seed;    /**< Philox key: key word 0 = low half, word 1 = high half. */
    uint64_t counter; /**< Philox counter words 0 (low half) and 1 (high half). */
    uint64_t block;   /**< Counter words 2 and 3 of the NEXT block to compute. */
    uint64_t q[2];    /**< The current block's unused words (queue, next in q[0]'s low half). */
    int left;         /**< How many words q holds: 0 .. 4; 0 means compute block next. */
    int has_spare;    /**< px_rng_normal_f64 holds the second normal of a pair in spare. */
    double spare;     /**< That second normal. */
} px_rng;

/**
 * The stream of (seed, counter), positioned at its first word (block 0). Pure: no state, no
 * allocation; the same numbers on every space and thread count.
 *
 * @param seed     Philox key (low word first).
 * @param counter  Philox counter words 0 and 1 (low first): the stream's index, e.g. the loop
 *                 index of the work item that draws from it.
 * @return the stream; never fails.
 * Thread-safe. Mirrors curand_init(seed, subsequence, 0, &state) and Random123's
 * philox4x32(ctr, key).
 */
PXI_RNG_FN px_rng px_rng_at(uint64_t seed, uint64_t counter)
{
    px_rng r;
    r.seed = seed;
    r.counter = counter;
    r.block = 0;
    r.q[0] = r.q[1] = 0;
    r.left = 0;
    r.has_spare = 0;
    r.spare = 0.0;
    return r;
}

/**
 * Move @p r to the first word of block @p block of its stream (words 4 * block onwards):
 * skip-ahead in O(1). Drops a cached normal. Mirrors curand's skipahead and setting Philox
 * counter words 2 and 3 in Random123.
 *
 * @param r      [in,out] the stream; Caller must pass a valid pointer.
 * @param block  block index, 0 .. 2^64 - 1.
 * Not thread-safe on one px_rng (it is a value: each thread owns its own).
 */
PXI_RNG_FN void px_rng_seek(px_rng *r, uint64_t block)
{
    r->block = block;
    r->q[0] = r->q[1] = 0;
    r->left = 0;
    r->has_spare = 0;
}

/* Internal: philox4x32_R(10, ...) of r's next block, and advance r->block (wrapping at 2^64,
 * the 64-bit carry from counter word 2 into word 3). The caller queues the words it keeps. */
PXI_RNG_FN philox4x32_ctr_t pxi_rng_block(px_rng *r)
{
    philox4x32_ctr_t c = {{(uint32_t)r->counter, (uint32_t)(r->counter >> 32), (uint32_t)r->block,
                           (uint32_t)(r->block >> 32)}};
    philox4x32_key_t k = {{(uint32_t)r->seed, (uint32_t)(r->seed >> 32)}};
    ++r->block;
    return philox4x32_R(10, c, k);
}

/**
 * The next 32 random bits of the stream: the next queued word of the current block, computing
 * the next block (one philox4x32_R(10, ...) call) every fourth call.
 *
 * @param r  [in,out] the stream; Caller must pass a valid pointer.
 * @return uniformly distributed on 0 .. 2^32 - 1.
 * Not thread-safe on one px_rng. Mirrors curand(&state).
 */
PXI_RNG_FN uint32_t px_rng_u32(px_rng *r)
{
    if (r->left == 0) {
        philox4x32_ctr_t o = pxi_rng_block(r);
        r->q[0] = (uint64_t)o.v[0] | (uint64_t)o.v[1] << 32;
        r->q[1] = (uint64_t)o.v[2] | (uint64_t)o.v[3] << 32;
        r->left = 4;
    }
    uint32_t w = (uint32_t)r->q[0];
    r->q[0] = r->q[0] >> 32 | r->q[1] << 32;
    r->q[1] >>= 32;
    --r->left;
    return w;
}

/**
 * A uniform double in [0, 1) with 53 random bits: the next two words a, b give
 * ((a << 21) | (b >> 11)) * 2^-53 (a's 32 bits high, b's top 21 bits low). Every multiple of
 * 2^-53 in [0, 1) has probability 2^-53; 0 is possible, 1 is not. Exact: no rounding happens.
 * Two draws per Philox block, taken straight from the block's output when the stream is at a
 * block start (always, for a stream used only for doubles); no per-word bookkeeping.
 *
 * @param r  [in,out] the stream; Caller must pass a valid pointer.
 * Not thread-safe on one px_rng. Mirrors curand_uniform_double and Random123's u01.
 */
PXI_RNG_FN double px_rng_uniform_f64(px_rng *r)
{
    uint64_t a, b;
    if (r->left == 0) { /* words 0, 1 of a new block now, 2, 3 queued */
        philox4x32_ctr_t o = pxi_rng_block(r);
        a = o.v[0];
        b = o.v[1];
        r->q[0] = (uint64_t)o.v[2] | (uint64_t)o.v[3] << 32;
        r->q[1] = 0;
        r->left = 2;
    } else if (r->left >= 2) { /* two queued words */
        a = (uint32_t)r->q[0];
        b = r->q[0] >> 32;
        r->q[0] = r->q[1];
        r->q[1] = 0;
        r->left -= 2;
    } else { /* one queued word, then a new block (after an odd number of px_rng_u32) */
        a = px_rng_u32(r);
        b = px_rng_u32(r);
    }
    return (double)(a << 21 | b >> 11) * 1.1102230246251565404236316680908203125e-16; /* 2^-53 */
}

/**
 * A uniform float in [0, 1) with 24 random bits: the next word u gives (u >> 8) * 2^-24. Exact.
 *
 * @param r  [in,out] the stream; Caller must pass a valid pointer.
 * Not thread-safe on one px_rng. Mirrors curand_uniform.
 */
PXI_RNG_FN float px_rng_uniform_f32(px_rng *r)
{
    return (float)(px_rng_u32(r) >> 8) * 5.9604644775390625e-08f; /* 2^-24, exact */
}

/**
 * A standard normal double (mean 0, variance 1), by the Box-Muller transform: two uniforms
 * u1 = 1 - px_rng_uniform_f64 (in (0, 1], so log is finite) and u2 = px_rng_uniform_f64 give
 * rho = sqrt(-2 log u1) and the pair (rho cos(2 pi u2), rho sin(2 pi u2)), two independent
 * normals. The first is returned and the second cached in the px_rng for the next call, so a
 * pair costs four words (one Philox block when aligned). The cached value survives other draws
 * in between (px_rng_u32 does not clear it); px_rng_seek and px_rng_at drop it.
 *
 * Exactness: the uniforms are exact; the transform rounds in sqrt, log, cos and sin, so the
 * normal is correct to a few ulps and its tails are cut at |x| <= sqrt(-2 log 2^-53) = 8.57.
 * On host spaces the bits are those of the host libm, identical for serial and threads; on
 * cuda, CUDA's log/sin/cos (1-2 ulp) may differ from the host in the last bits.
 *
 * @param r  [in,out] the stream; Caller must pass a valid pointer.
 * Not thread-safe on one px_rng. Mirrors curand_normal_double (also Box-Muller) and
 * Random123's boxmuller.hpp.
 */
PXI_RNG_FN double px_rng_normal_f64(px_rng *r)
{
    if (r->has_spare) {
        r->has_spare = 0;
        return r->spare;
    }
    double u1 = 1.0 - px_rng_uniform_f64(r);
    double u2 = px_rng_uniform_f64(r);
    double rho = sqrt(-2.0 * log(u1));
    double t = 6.283185307179586476925286766559 * u2; /* 2 pi u2 */
    r->spare = rho * sin(t);
    r->has_spare = 1;
    return rho * cos(t);
}

#ifdef __cplusplus
}
#endif

#endif /* PAREX_RNG_H */
