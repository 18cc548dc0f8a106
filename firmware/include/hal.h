/* A thin HAL for the MARSELLUS fabric controller (see docs/firmware.md).
 * Every address and register offset comes from marsellus_map.h, which gen_headers.py
 * generates from the models' own register tables: nothing here repeats a number. */
#ifndef HAL_H
#define HAL_H

#include <stdint.h>
#include <stddef.h>
#include "marsellus_map.h"

#define HAL_REG(addr) (*(volatile uint32_t *)(uintptr_t)(addr))
#define HAL_SECTION_L2 __attribute__((section(".l2_shared"), aligned(8)))
#define HAL_SECTION_TCDM __attribute__((section(".tcdm"), aligned(8)))

static inline void hal_write32(uint32_t addr, uint32_t v) { HAL_REG(addr) = v; }
static inline uint32_t hal_read32(uint32_t addr) { return HAL_REG(addr); }

/* ---- CSRs, interrupts, wfi ---------------------------------------------------------- */
#define HAL_CSR_READ(csr) ({ uint32_t v_; __asm__ volatile("csrr %0, " #csr : "=r"(v_)); v_; })
#define HAL_CSR_SET(csr, bits) __asm__ volatile("csrs " #csr ", %0" :: "r"(bits))
#define HAL_CSR_CLEAR(csr, bits) __asm__ volatile("csrc " #csr ", %0" :: "r"(bits))

static inline void hal_wfi(void) { __asm__ volatile("wfi" ::: "memory"); }
/* Enable interrupt line n (IRQ_*) in mie: it then wakes wfi (and traps when
 * hal_irq_global_enable() is on). */
static inline void hal_irq_line_enable(int n) { HAL_CSR_SET(mie, 1u << n); }
static inline void hal_irq_line_disable(int n) { HAL_CSR_CLEAR(mie, 1u << n); }
static inline void hal_irq_global_enable(void) { HAL_CSR_SET(mstatus, 8u); }
static inline void hal_irq_global_disable(void) { HAL_CSR_CLEAR(mstatus, 8u); }
typedef void (*hal_irq_handler_t)(void);
void hal_irq_set_handler(int line, hal_irq_handler_t fn);

/* ---- print and exit (stdout peripheral) ----------------------------------------------- */
void hal_putc(char c);
void hal_puts(const char *s);
void hal_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void hal_exit(int code) __attribute__((noreturn));

/* ---- SOC timer ------------------------------------------------------------------------- */
uint64_t timer_now(void);
void timer_start(uint32_t prescaler);
/* Interrupt every `period` ticks (auto-reload), on IRQ_TIMER when `irq`. */
void timer_periodic(uint64_t period, int irq);

/* ---- cluster DMA ------------------------------------------------------------------------ */
/* Queue a 1D copy and return its transfer ID (or -1 when the queue is full). */
int dma_copy_1d(uint32_t l2_addr, uint32_t tcdm_addr, uint32_t len, int l2_to_tcdm);
/* Sleep (wfi on IRQ_CLUSTER_DMA) until transfer `id` is done, free it; returns the ERROR
 * register (0 = success). */
uint32_t dma_wait(int id);

/* ---- RBE --------------------------------------------------------------------------------- */
/* Acquire a job context (spins while both are busy); returns the job ID. */
int rbe_acquire(void);
/* Write job register i (0 = X_ADDR ... in registers.yaml order). */
static inline void rbe_job_reg(int i, uint32_t v) { HAL_REG(RBE_BASE + RBE_X_ADDR + 4u * i) = v; }
static inline void rbe_trigger(void) { HAL_REG(RBE_BASE + RBE_TRIGGER) = 0; }
static inline uint32_t rbe_finished(void) { return HAL_REG(RBE_BASE + RBE_FINISHED); }
static inline uint32_t rbe_status(void) { return HAL_REG(RBE_BASE + RBE_STATUS); }
/* Sleep (wfi on IRQ_RBE) until FINISHED reaches `count`; returns STATUS. */
uint32_t rbe_wait_finished(uint32_t count);

/* ---- Event Unit, cluster control (offload), PMU: thin register access; the offsets
 * (EU_*, CL_CTRL_*, PMU_*) come from the models' tables when they publish one ---- */
#ifdef EU_PRESENT
static inline void eu_write(uint32_t off, uint32_t v) { HAL_REG(EVENT_UNIT_BASE + off) = v; }
static inline uint32_t eu_read(uint32_t off) { return HAL_REG(EVENT_UNIT_BASE + off); }
#endif
#ifdef CL_CTRL_PRESENT
static inline void cl_ctrl_write(uint32_t off, uint32_t v) { HAL_REG(CLUSTER_CTRL_BASE + off) = v; }
static inline uint32_t cl_ctrl_read(uint32_t off) { return HAL_REG(CLUSTER_CTRL_BASE + off); }
#endif
#ifdef PMU_PRESENT
static inline void pmu_write(uint32_t off, uint32_t v) { HAL_REG(PMU_BASE + off) = v; }
static inline uint32_t pmu_read(uint32_t off) { return HAL_REG(PMU_BASE + off); }
#endif

#endif /* HAL_H */
