/* bench_mmio: an MMIO-heavy loop (reads of the SOC timer counter). */
#include "hal.h"

int main(void)
{
    uint32_t acc = 0;
    for (uint32_t i = 0; i < 20000u; i++)
        acc += HAL_REG(TIMER_BASE + TIMER_CNT_LO);
    hal_printf("acc=%08x\n", (unsigned)acc);
    return 0;
}
