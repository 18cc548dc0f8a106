/* bench_compute: a compute-only loop (no peripheral access until the final print). */
#include "hal.h"

int main(void)
{
    uint32_t x = 1, acc = 0;
    for (uint32_t i = 0; i < 2000000u; i++) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        acc += x * (i | 1);
    }
    hal_printf("acc=%08x\n", (unsigned)acc);
    return 0;
}
