/* bench_core_kernels: the inner loops of the cluster's int8 core kernels in plain C (RV32IMC),
 * timed by cosim/kernel_costs.py on our ISS (same method as bench_kernels.c). Each
 * configuration runs on N and on 2N elements between three equal marker lines ("k\n"); the
 * difference of the two intervals is the cost of N elements' inner loops, and twice the
 * first interval minus the second is the fixed cost of one call (set-up, loop entry; the
 * "empty" configuration gives the marker's own cost to subtract). Arithmetic as
 * components/cluster/ops.py defines it:
 *   0. empty: nothing between the markers
 *   1. im2col: a conv output row's patches (3x3, 32 input channels, HWC), copied by 32-bit
 *      words as PULP-NN does (N output pixels)
 *   2. conv requant: clip((scale[co] * acc + bias[co]) >> shift) in 64 bits, int8 store
 *      (N pixels x 16 output channels)
 *   3. add_int8: clip((m1*a + m2*b + bias) >> shift) per element, int8 in and out
 *   4. pool requant: clip((sum * mult + bias) >> shift) in 64 bits per channel, uint8 store
 *   5. fc: 2 outputs per pass over x (two accumulators, as the cluster kernel reads x once
 *      per pair of outputs), K = N x 32 inputs: per MAC, and per output at fixed K below
 *   6. fc at K = 32 on N pairs of outputs: the per-output overhead
 *   7. int8 dot product (the matmul-style scalar MAC, as in bench_kernels.c)
 */
#include "hal.h"

#define CIN 32
#define KS 3
#define COUT 16
#define NMAX 16                        /* 2N */
#define WIN (NMAX + KS - 1)
#define FK (NMAX * 32)                 /* largest fc K */
#define FO (2 * NMAX)                  /* largest fc output count */

static int8_t img[KS * WIN * CIN] __attribute__((aligned(4)));
static int8_t col[NMAX * KS * KS * CIN] __attribute__((aligned(4)));
static int32_t acc[NMAX * COUT], scale[COUT], bias[COUT];
static int8_t outb[NMAX * COUT * 2];
static int8_t xa[NMAX * COUT * 2], xb[NMAX * COUT * 2];
static int8_t fx[FK], fw[2 * FK];            /* case 5: 2 rows of K; case 6: FO rows of 32 */
static int32_t fb[FO], fout[FO];
/* sizes and requantisation parameters through volatile globals: the compiler cannot
 * specialise the loops on them (the cluster kernels take them as job arguments) */
static volatile int v_n = NMAX / 2, v_cin = CIN, v_cout = COUT, v_win = WIN, v_shift = 20, v_relu = 0;
static volatile int32_t v_m1 = 21845, v_m2 = 13107, v_bias = 1 << 14, v_ashift = 15;
static volatile int32_t v_mult = 1024, v_pbias = 1 << 19, v_pshift = 20, v_k = 32;
static volatile int32_t sink;

/* the patches of `wo` output pixels of one output row (stride 1, no padding): KS rows of
 * the input slab, KS x CIN contiguous bytes each, moved in 32-bit words */
__attribute__((noinline)) static void im2col_row(const int8_t *x, int8_t *dst, int wo, int cin, int w)
{
    uint32_t *d = (uint32_t *)dst;
    for (int ox = 0; ox < wo; ox++)
        for (int ky = 0; ky < KS; ky++) {
            const uint32_t *s = (const uint32_t *)(x + (ky * w + ox) * cin);
            for (int i = 0; i < KS * cin / 4; i++)
                *d++ = s[i];
        }
}

__attribute__((noinline)) static void conv_requant(const int32_t *a, const int32_t *sc, const int32_t *bs,
                                                   int8_t *o, int pixels, int cout, int shift, int relu)
{
    const int64_t lo = relu ? 0 : -128;
    for (int p = 0; p < pixels; p++, a += cout, o += cout)
        for (int c = 0; c < cout; c++) {
            int64_t r = ((int64_t)a[c] * sc[c] + bs[c]) >> shift;
            o[c] = (int8_t)(r < lo ? lo : (r > 127 ? 127 : r));
        }
}

__attribute__((noinline)) static void add_int8(const int8_t *a, const int8_t *b, int8_t *o, int n,
                                               int32_t m1, int32_t m2, int32_t bs, int shift)
{
    for (int i = 0; i < n; i++) {
        int32_t v = (m1 * a[i] + m2 * b[i] + bs) >> shift;
        o[i] = (int8_t)(v < -128 ? -128 : (v > 127 ? 127 : v));
    }
}

__attribute__((noinline)) static void pool_requant(const int32_t *s, uint8_t *o, int k, int32_t mult,
                                                   int32_t bs, int shift)
{
    for (int c = 0; c < k; c++) {
        int64_t r = ((int64_t)s[c] * mult + bs) >> shift;
        o[c] = (uint8_t)(r < 0 ? 0 : (r > 255 ? 255 : r));
    }
}

__attribute__((noinline)) static void fc(const int8_t *x, const int8_t *w, const int32_t *b, int32_t *o,
                                         int outputs, int k)
{
    for (int n = 0; n < outputs; n += 2, w += 2 * k) {
        const int8_t *w1 = w + k;
        int32_t s0 = b[n], s1 = b[n + 1];
        for (int i = 0; i < k; i++) {
            int32_t xv = x[i];
            s0 += xv * w[i];
            s1 += xv * w1[i];
        }
        o[n] = s0;
        o[n + 1] = s1;
    }
}

__attribute__((noinline)) static int32_t dot_int8(const int8_t *a, const int8_t *b, int n)
{
    int32_t s = 0;
    for (int i = 0; i < n; i++)
        s += a[i] * b[i];
    return s;
}

static void run(int kind, int n)
{
    switch (kind) {
    case 0: break;
    case 1: im2col_row(img, col, n, v_cin, v_win); break;
    case 2: conv_requant(acc, scale, bias, outb, n, v_cout, v_shift, v_relu); break;
    case 3: add_int8(xa, xb, outb, n * v_cout, v_m1, v_m2, v_bias, v_ashift); break;
    case 4: pool_requant(acc, (uint8_t *)outb, n * v_cout, v_mult, v_pbias, v_pshift); break;
    case 5: fc(fx, fw, fb, fout, 2, n * v_k); break;
    case 6: fc(fx, fw, fb, fout, 2 * n, v_k); break;
    default: sink = dot_int8(xa, xb, n * v_cout); break;
    }
}

int main(void)
{
    for (int i = 0; i < (int)sizeof img; i++)
        img[i] = (int8_t)(i * 37 + 5);
    for (int i = 0; i < NMAX * COUT; i++)
        acc[i] = (int32_t)(0x9e3779b9u * (uint32_t)(i + 1)) >> 12;
    for (int i = 0; i < COUT; i++) {
        scale[i] = 3000 + 77 * i;
        bias[i] = (i - 8) * 4096;
    }
    for (int i = 0; i < (int)sizeof xa; i++) {
        xa[i] = (int8_t)(i * 37);
        xb[i] = (int8_t)(i * 91 + 3);
    }
    for (int i = 0; i < FK; i++)
        fx[i] = (int8_t)(i * 13 + 1);
    for (int i = 0; i < 2 * FK; i++)
        fw[i] = (int8_t)(i * 29 + 7);
    for (int i = 0; i < FO; i++)
        fb[i] = i * 100 - 1000;
    for (int kind = 0; kind <= 7; kind++) {
        int n = v_n;
        hal_puts("k\n");
        run(kind, n);
        hal_puts("k\n");
        run(kind, 2 * n);
        hal_puts("k\n");
    }
    return 0;
}
