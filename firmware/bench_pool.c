/* bench_pool: the inner loops of the cluster's int8 max-pooling and LeakyRelu kernels in
 * plain C (RV32IMC), timed by cosim/kernel_costs.py on our ISS like bench_kernels.c (a
 * program of its own so that bench_kernels' layout, and the costs measured from it, stay
 * as they are). Each configuration runs on N and on 2N pixels of 32 channels between three
 * equal marker lines ("k\n"); the difference of the two intervals is N pixels' worth.
 *   1. maxpool: the maximum of a 3x3 window of int8 values per channel (-> cost per tap)
 *   2. leaky: int8 LeakyRelu as the QDQ requantisation does it, a multiplier per side of
 *      the zero point, a shift rounding half to even, the output zero point, clip (-> cost
 *      per element)
 *   3. lut: an int8 table look-up per element (any element-wise function of one int8
 *      tensor, exactly; -> cost per element)
 */
#include "hal.h"

#define CH 32
#define NMAX 16

static int8_t xw[3 * (2 * NMAX + 2) * CH], xo[2 * NMAX * CH], table[256];
/* sizes and parameters through volatile globals: no specialising on them */
static volatile int v_n = NMAX / 2, v_zp = -3, v_neg = 1638, v_shift = 14, v_zo = 5;

__attribute__((noinline)) static void maxpool3(const int8_t *x, int8_t *o, int pixels)
{
    /* output pixel p reads the 3x3 window at column p of three rows of pixels + 2: every
     * tap is one load and one compare per channel */
    const int row = (pixels + 2) * CH;
    for (int p = 0; p < pixels; p++, o += CH)
        for (int c = 0; c < CH; c++) {
            const int8_t *w = x + p * CH + c;
            int32_t m = -128;
            for (int ky = 0; ky < 3; ky++, w += row)
                for (int kx = 0; kx < 3; kx++) {
                    int32_t v = w[kx * CH];
                    m = v > m ? v : m;
                }
            o[c] = (int8_t)m;
        }
}

__attribute__((noinline)) static void leaky_int8(const int8_t *x, int8_t *o, int n)
{
    const int32_t zp = v_zp, m_pos = 1 << v_shift, m_neg = v_neg, shift = v_shift, zo = v_zo;
    const int32_t half = 1 << (shift - 1), mask = (1 << shift) - 1;
    for (int i = 0; i < n; i++) {
        int32_t d = x[i] - zp;
        int32_t p = d * (d < 0 ? m_neg : m_pos);
        int32_t q = p >> shift, r = p & mask;
        q += (r > half) | ((r == half) & q);        /* round half to even */
        q += zo;
        o[i] = (int8_t)(q < -128 ? -128 : (q > 127 ? 127 : q));
    }
}

__attribute__((noinline)) static void lut_int8(const int8_t *x, int8_t *o, const int8_t *t, int n)
{
    for (int i = 0; i < n; i++)
        o[i] = t[x[i] + 128];
}

static void run(int kind, int n)
{
    if (kind == 0)
        maxpool3(xw, xo, n);
    else if (kind == 1)
        leaky_int8(xw, xo, n * CH);
    else
        lut_int8(xw, xo, table, n * CH);
}

int main(void)
{
    for (int i = 0; i < 3 * (2 * NMAX + 2) * CH; i++)
        xw[i] = (int8_t)(i * 53 + 11);
    for (int i = 0; i < 256; i++)
        table[i] = (int8_t)(i * 7 + 1);
    for (int k = 0; k < 3; k++) {
        int n = v_n;
        hal_puts("k\n");
        run(k, n);
        hal_puts("k\n");
        run(k, 2 * n);
        hal_puts("k\n");
    }
    return 0;
}
