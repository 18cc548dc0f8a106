/* voyager_job: the fabric controller drives MARSELLUS's Voyager unit (soc.voyager.enabled).
 * Copy voyager_mini's int8 tensors into a buffer in shared L2, then for each of the two
 * fused operators (3x3 conv + ReLU; GEMM + residual add) write its descriptor, start it,
 * sleep (wfi) until the unit's interrupt (IRQ_VOYAGER), check STATUS and acknowledge;
 * finally compare both outputs with the numpy reference.
 * Prints PASS or FAIL. Exit code: 0 on a bit-exact match; 0x100|(job<<4)|error for a job
 * the unit refused, else the number of mismatching bytes. */
#include <string.h>
#include "hal.h"
#include "voyager_job_data.h"

static uint8_t vbuf[VOYAGER_DATA_BUF_BYTES] HAL_SECTION_L2;

#define VOY(reg) HAL_REG(VOYAGER_BASE + (reg))

static int compare(const uint8_t *got, const uint8_t *want, unsigned n)
{
    int bad = 0;
    for (unsigned i = 0; i < n; i++)
        bad += got[i] != want[i];
    return bad;
}

int main(void)
{
    for (unsigned i = 0; i < sizeof voyager_inputs / sizeof voyager_inputs[0]; i++)
        memcpy(vbuf + voyager_inputs[i].offset, voyager_inputs[i].data, voyager_inputs[i].len);
    hal_irq_line_enable(IRQ_VOYAGER);
    VOY(VOYAGER_IRQ_ENABLE) = 1;
    for (int j = 0; j < VOYAGER_DATA_N_JOBS; j++) {
        for (int r = 0; r < VOYAGER_DATA_N_REGS; r++) {
            const struct voyager_reg *d = &voyager_jobs[j][r];
            VOY(d->offset) = d->is_addr ? (uint32_t)vbuf + d->value : d->value;
        }
        VOY(VOYAGER_CTRL) = VOYAGER_CTRL_START_FUSED;
        uint32_t status;
        while (!((status = VOY(VOYAGER_STATUS)) & VOYAGER_STATUS_DONE))
            hal_wfi();
        VOY(VOYAGER_STATUS) = VOYAGER_STATUS_DONE;      /* write 1 to clear */
        VOY(VOYAGER_IRQ_STATUS) = 1;
        uint32_t err = (status & VOYAGER_STATUS_ERROR_MASK) >> VOYAGER_STATUS_ERROR_LSB;
        if (err) {
            hal_printf("voyager_job: FAIL, job %d refused (error %u)\n", j, (unsigned)err);
            return 0x100 | (j << 4) | (int)err;
        }
    }
    int bad1 = compare(vbuf + VOYAGER_DATA_Y1_OFFSET, voyager_expected_y1, sizeof voyager_expected_y1);
    int bad2 = compare(vbuf + VOYAGER_DATA_Y2_OFFSET, voyager_expected_y2, sizeof voyager_expected_y2);
    hal_printf("voyager_job: %d jobs, %u busy cycles, outputs %u + %u bytes: %s (%d + %d mismatches)\n",
               VOYAGER_DATA_N_JOBS, (unsigned)VOY(VOYAGER_CYCLE_LO),
               (unsigned)sizeof voyager_expected_y1, (unsigned)sizeof voyager_expected_y2,
               bad1 + bad2 ? "FAIL" : "PASS", bad1, bad2);
    return bad1 + bad2;
}
