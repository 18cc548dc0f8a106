/* bench_kernels: the inner loops of the cluster's core kernels in plain C (RV32IMC), timed
 * by components/cluster/iss_costs.py on our ISS. Each configuration runs on N and on 2N
 * pixels between three equal marker lines ("k\n"); the difference of the two intervals is
 * the cost of N pixels' inner loops, free of call, print and set-up overheads.
 *   1. add_requant: residual add of bit-plane tensors (unpack a and b per channel and bit,
 *      m1*a + m2*b + bias, shift, clip, pack), at 8/8/8 and 4/4/4 bits (-> cost per element
 *      and per channel-bit)
 *   2. avgpool: unpack and accumulate (8 bits)
 *   3. an int8 dot product (one MAC per element): the scalar baseline the paper's SIMD rate
 *      is compared with
 */
#include "hal.h"

#define CH 32
#define NMAX 16
#define BMAX 8

static uint32_t wa[2 * NMAX * BMAX], wb[2 * NMAX * BMAX], wo[2 * NMAX * BMAX];
static int32_t acc[CH];
static int8_t xa[2 * NMAX * CH], xb[2 * NMAX * CH];
/* sizes through volatile globals: the compiler cannot specialise the loops on them */
static volatile int v_n = NMAX / 2, v_bits_a, v_bits_b, v_bits_o;

__attribute__((noinline)) static void add_requant(const uint32_t *a, const uint32_t *b, uint32_t *o,
                                                  int pixels, int ab, int bb, int ob)
{
    const int32_t m1 = 3, m2 = 5, bias = 4, shift = 3, top = (1 << ob) - 1;
    for (int p = 0; p < pixels; p++, a += ab, b += bb, o += ob) {
        for (int j = 0; j < ob; j++)
            o[j] = 0;
        for (int c = 0; c < CH; c++) {
            int32_t va = 0, vb = 0;
            for (int j = 0; j < ab; j++)
                va |= ((a[j] >> c) & 1u) << j;
            for (int j = 0; j < bb; j++)
                vb |= ((b[j] >> c) & 1u) << j;
            int32_t v = (m1 * va + m2 * vb + bias) >> shift;
            v = v < 0 ? 0 : (v > top ? top : v);
            for (int j = 0; j < ob; j++)
                o[j] |= (((uint32_t)v >> j) & 1u) << c;
        }
    }
}

__attribute__((noinline)) static void avgpool_acc(const uint32_t *x, int pixels, int bits)
{
    for (int p = 0; p < pixels; p++, x += bits)
        for (int c = 0; c < CH; c++) {
            int32_t v = 0;
            for (int j = 0; j < bits; j++)
                v |= ((x[j] >> c) & 1u) << j;
            acc[c] += v;
        }
}

__attribute__((noinline)) static int32_t dot_int8(const int8_t *a, const int8_t *b, int n)
{
    int32_t s = 0;
    for (int i = 0; i < n; i++)
        s += a[i] * b[i];
    return s;
}

static volatile int32_t sink;

static void run(int kind, int n)
{
    switch (kind) {
    case 0: add_requant(wa, wb, wo, n, v_bits_a, v_bits_b, v_bits_o); break;
    case 1: avgpool_acc(wa, n, v_bits_a); break;
    default: sink = dot_int8(xa, xb, n * CH); break;
    }
}

int main(void)
{
    for (int i = 0; i < 2 * NMAX * BMAX; i++) {
        wa[i] = 0x9e3779b9u * (uint32_t)(i + 1);
        wb[i] = 0x85ebca6bu * (uint32_t)(i + 7);
    }
    for (int i = 0; i < 2 * NMAX * CH; i++) {
        xa[i] = (int8_t)(i * 37);
        xb[i] = (int8_t)(i * 91 + 3);
    }
    static const int cfg[][4] = {{0, 8, 8, 8}, {0, 4, 4, 4}, {1, 8, 0, 0}, {2, 0, 0, 0}};
    for (unsigned k = 0; k < sizeof cfg / sizeof cfg[0]; k++) {
        v_bits_a = cfg[k][1];
        v_bits_b = cfg[k][2];
        v_bits_o = cfg[k][3];
        int n = v_n;
        hal_puts("k\n");
        run(cfg[k][0], n);
        hal_puts("k\n");
        run(cfg[k][0], 2 * n);
        hal_puts("k\n");
    }
    return 0;
}
