/* tensil_job: the fabric controller drives MARSELLUS's Tensil TCU (soc.tensil.enabled).
 * The compiled program and its constants (DRAM1) stay where the ELF put them (FC private
 * L2); DRAM0 is a buffer in shared L2: copy the input in, point the TCU at the program and
 * both banks, start it, sleep (wfi) until its end-of-job interrupt (IRQ_TENSIL), then
 * compare the output with the numpy fixed-point reference.
 * Prints PASS or FAIL. Exit code: 0 on a bit-exact match; 0x100|STATUS for a TCU error,
 * else the number of mismatching bytes. */
#include <string.h>
#include "hal.h"
#include "tensil_job_data.h"

static uint8_t dram0[TENSIL_DATA_DRAM0_BYTES] HAL_SECTION_L2;

/* register offsets and bits: include/marsellus_map.h (from accelerators/tensil/model/registers.yaml) */
#define TCU(reg) HAL_REG(TENSIL_BASE + TENSIL_##reg)

int main(void)
{
    memcpy(dram0 + TENSIL_DATA_INPUT_OFFSET, tensil_input, sizeof tensil_input);
    hal_irq_line_enable(IRQ_TENSIL);
    TCU(PROG_ADDR) = (uint32_t)tensil_program;
    TCU(PROG_COUNT) = TENSIL_DATA_N_INSTRUCTIONS;
    TCU(DRAM0_BASE) = (uint32_t)dram0;
    TCU(DRAM1_BASE) = (uint32_t)tensil_consts;
    TCU(START) = TENSIL_START_RUN;
    uint32_t status;
    while ((status = TCU(STATUS)) & TENSIL_STATUS_BUSY)
        hal_wfi();
    uint32_t executed = TCU(INSTRUCTIONS), cycles = TCU(CYCLES_LO);
    if (status & TENSIL_STATUS_ERROR) {
        hal_printf("tensil_job: FAIL, TCU error at instruction %u\n", (unsigned)TCU(ERROR_PC));
        return 0x100 | (int)status;
    }
    const uint8_t *out = dram0 + TENSIL_DATA_OUTPUT_OFFSET;
    int bad = 0;
    for (unsigned i = 0; i < TENSIL_DATA_OUTPUT_LEN; i++)
        bad += out[i] != tensil_expected[i];
    hal_printf("tensil_job: %u instructions, %u TCU cycles, %u output bytes: %s (%d mismatches)\n",
               (unsigned)executed, (unsigned)cycles, (unsigned)TENSIL_DATA_OUTPUT_LEN,
               bad ? "FAIL" : "PASS", bad);
    return bad;
}
