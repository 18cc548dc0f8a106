/* rbe_job: DMA a layer's operands into TCDM, program one RBE job, sleep until its
 * end-of-job event, DMA the outputs back and compare them with the golden result.
 * Exit code: 0 on success; 0x200|err for a DMA error, 0x300|code for an RBE error,
 * else the number of mismatching bytes. */
#include <string.h>
#include "hal.h"
#include "rbe_job_data.h"

static uint8_t result[RBE_DATA_Y_LEN] HAL_SECTION_L2;

int main(void)
{
    int id = dma_copy_1d((uint32_t)rbe_operands, RBE_DATA_TCDM_ADDR, sizeof rbe_operands, 1);
    uint32_t err = dma_wait(id);
    if (err)
        return 0x200 | (int)err;

    uint32_t done_before = rbe_finished();
    int job = rbe_acquire();
    for (int i = 0; i < RBE_DATA_N_REGS; i++)
        rbe_job_reg(i, rbe_job_regs[i]);
    rbe_trigger();
    uint32_t status = rbe_wait_finished(done_before + 1);
    uint32_t code = (status & RBE_STATUS_LAST_ERROR_MASK) >> RBE_STATUS_LAST_ERROR_LSB;
    if (code)
        return 0x300 | (int)code;

    id = dma_copy_1d((uint32_t)result, RBE_DATA_Y_ADDR, RBE_DATA_Y_LEN, 0);
    err = dma_wait(id);
    if (err)
        return 0x200 | (int)err;
    int bad = 0;
    for (unsigned i = 0; i < RBE_DATA_Y_LEN; i++)
        bad += result[i] != rbe_expected[i];
    hal_printf("rbe_job: job %d, %u output bytes %s (%d mismatches)\n", job,
               (unsigned)RBE_DATA_Y_LEN, bad ? "FAILED" : "match the golden", bad);
    return bad;
}
