/* The HAL's out-of-line part: print, exit, traps, timer, DMA and RBE helpers. */
#include <stdarg.h>
#include "hal.h"

#define STDOUT_FC (STDOUT_BASE + STDOUT_FC_SLOT)

/* ---- print and exit ---- */
void hal_putc(char c) { HAL_REG(STDOUT_FC + STDOUT_SLOT_PUTC) = (uint8_t)c; }

void hal_puts(const char *s)
{
    while (*s)
        hal_putc(*s++);
}

static void put_uint(uint32_t v, unsigned base, int width, char pad, int upper)
{
    char buf[12];
    const char *digits = upper ? "0123456789ABCDEF" : "0123456789abcdef";
    int n = 0;
    do {
        buf[n++] = digits[v % base];
        v /= base;
    } while (v);
    while (width-- > n)
        hal_putc(pad);
    while (n)
        hal_putc(buf[--n]);
}

/* %d %i %u %x %X %p %s %c %%, with an optional 0 flag and width. */
void hal_printf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    for (; *fmt; fmt++) {
        if (*fmt != '%') {
            hal_putc(*fmt);
            continue;
        }
        char pad = ' ';
        int width = 0;
        if (*++fmt == '0')
            pad = '0', fmt++;
        while (*fmt >= '0' && *fmt <= '9')
            width = width * 10 + (*fmt++ - '0');
        switch (*fmt) {
        case 'd': case 'i': {
            int v = va_arg(ap, int);
            if (v < 0) {
                hal_putc('-');
                v = -v;
                width--;
            }
            put_uint((uint32_t)v, 10, width, pad, 0);
            break;
        }
        case 'u': put_uint(va_arg(ap, uint32_t), 10, width, pad, 0); break;
        case 'x': put_uint(va_arg(ap, uint32_t), 16, width, pad, 0); break;
        case 'X': put_uint(va_arg(ap, uint32_t), 16, width, pad, 1); break;
        case 'p': hal_puts("0x"); put_uint((uint32_t)(uintptr_t)va_arg(ap, void *), 16, 8, '0', 0); break;
        case 's': hal_puts(va_arg(ap, const char *)); break;
        case 'c': hal_putc((char)va_arg(ap, int)); break;
        case '%': hal_putc('%'); break;
        case 0: fmt--; break;
        default: hal_putc('%'); hal_putc(*fmt); break;
        }
    }
    va_end(ap);
}

void hal_exit(int code)
{
    HAL_REG(STDOUT_FC + STDOUT_SLOT_EXIT) = (uint32_t)code;
    for (;;)
        hal_wfi();
}

/* ---- traps ---- */
static hal_irq_handler_t handlers[32];

void hal_irq_set_handler(int line, hal_irq_handler_t fn) { handlers[line & 31] = fn; }

void hal_trap_dispatch(uint32_t mcause)
{
    if (mcause & 0x80000000u) {
        hal_irq_handler_t fn = handlers[mcause & 31];
        if (fn)
            fn();
        return;
    }
    /* Synchronous exceptions stop the simulated core before they get here. */
    hal_exit(0x100 | (int)(mcause & 0xff));
}

/* ---- SOC timer ---- */
uint64_t timer_now(void)
{
    uint32_t lo = HAL_REG(TIMER_BASE + TIMER_CNT_LO);  /* latches the high word */
    uint32_t hi = HAL_REG(TIMER_BASE + TIMER_CNT_HI);
    return ((uint64_t)hi << 32) | lo;
}

void timer_start(uint32_t prescaler)
{
    HAL_REG(TIMER_BASE + TIMER_CFG) = TIMER_CFG_EN | TIMER_CFG_RESET |
                                      (prescaler << TIMER_CFG_PRESCALER_LSB);
}

void timer_periodic(uint64_t period, int irq)
{
    HAL_REG(TIMER_BASE + TIMER_CMP_HI) = (uint32_t)(period >> 32);
    HAL_REG(TIMER_BASE + TIMER_CMP_LO) = (uint32_t)period;
    HAL_REG(TIMER_BASE + TIMER_CFG) = TIMER_CFG_EN | TIMER_CFG_RESET | TIMER_CFG_MODE |
                                      (irq ? TIMER_CFG_IRQ_EN : 0);
}

/* ---- cluster DMA ---- */
int dma_copy_1d(uint32_t l2_addr, uint32_t tcdm_addr, uint32_t len, int l2_to_tcdm)
{
    uint32_t id = HAL_REG(CLUSTER_DMA_BASE + DMA_CMD);       /* reserve an ID */
    if (id == DMA_ID_FULL)
        return -1;
    HAL_REG(CLUSTER_DMA_BASE + DMA_TCDM_ADDR) = tcdm_addr;
    HAL_REG(CLUSTER_DMA_BASE + DMA_L2_ADDR) = l2_addr;
    HAL_REG(CLUSTER_DMA_BASE + DMA_CMD) = (len & DMA_CMD_LEN_MASK) | DMA_CMD_IRQ_EN |
                                          (l2_to_tcdm ? DMA_CMD_L2_TO_TCDM : 0);
    return (int)id;
}

uint32_t dma_wait(int id)
{
    uint32_t bit = 1u << id;
    hal_irq_line_enable(IRQ_CLUSTER_DMA);
    while (!(HAL_REG(CLUSTER_DMA_BASE + DMA_DONE) & bit))
        hal_wfi();
    uint32_t err = HAL_REG(CLUSTER_DMA_BASE + DMA_ERROR);
    HAL_REG(CLUSTER_DMA_BASE + DMA_FREE) = bit;
    return err;
}

/* ---- RBE ---- */
int rbe_acquire(void)
{
    uint32_t id;
    while ((id = HAL_REG(RBE_BASE + RBE_ACQUIRE)) == RBE_ACQUIRE_BUSY)
        ;
    return (int)id;
}

uint32_t rbe_wait_finished(uint32_t count)
{
    hal_irq_line_enable(IRQ_RBE);
    while ((int32_t)(rbe_finished() - count) < 0)
        hal_wfi();
    return rbe_status();
}
