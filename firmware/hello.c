/* hello: print through the stdout peripheral and exit 0. Touches no other peripheral. */
#include "hal.h"

static unsigned fib(unsigned n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }

int main(void)
{
    hal_puts("Hello from the MARSELLUS fabric controller!\n");
    hal_printf("fib(%u) = %u\n", 15u, fib(15));
    return 0;
}
