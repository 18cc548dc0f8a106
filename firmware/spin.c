/* spin: never exits. Counts forever and prints a heartbeat line every 1024 rounds: a run
 * that only a limit stops (limits.max_time, max_wall, max_memory; tests/test_unbounded.py). */
#include "hal.h"

int main(void)
{
    unsigned beat = 0;
    for (;;) {
        for (volatile unsigned i = 0; i < 1024u; i++)
            ;
        hal_printf("spin %u\n", beat++);
    }
}
