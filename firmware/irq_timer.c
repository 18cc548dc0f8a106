/* irq_timer: periodic SOC timer interrupts; the core sleeps in wfi between them.
 * Prints the counter at each of 3 ticks, exits 0. */
#include "hal.h"

#define PERIOD 1000u   /* timer ticks (SOC timer clock cycles) */

static volatile unsigned ticks;
static volatile uint32_t stamp[3];

static void on_timer(void)
{
    if (ticks < 3)
        stamp[ticks] = (uint32_t)timer_now();
    ticks++;
}

int main(void)
{
    hal_irq_set_handler(IRQ_TIMER, on_timer);
    hal_irq_line_enable(IRQ_TIMER);
    hal_irq_global_enable();
    timer_periodic(PERIOD, 1);
    while (ticks < 3)
        hal_wfi();
    hal_irq_global_disable();
    HAL_REG(TIMER_BASE + TIMER_CFG) = 0;             /* stop the timer */
    for (unsigned i = 0; i < 3; i++)
        hal_printf("tick %u at counter %u\n", i, (unsigned)stamp[i]);
    return 0;
}
