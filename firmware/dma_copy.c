/* dma_copy: L2 -> TCDM -> L2 with the cluster DMA, verified word by word.
 * Exit code: 0 on success, else the number of mismatching words (or 0x200 | DMA error). */
#include <string.h>
#include "hal.h"

#define N_WORDS 512  /* 2 KiB */

static uint32_t src[N_WORDS] HAL_SECTION_L2;
static uint32_t dst[N_WORDS] HAL_SECTION_L2;
static uint32_t tcdm_buf[N_WORDS] HAL_SECTION_TCDM;

static uint32_t pattern(uint32_t i) { return (i * 0x9E3779B1u) ^ (i << 7) ^ 0x5A5A0000u; }

int main(void)
{
    for (uint32_t i = 0; i < N_WORDS; i++)
        src[i] = pattern(i);
    memset(dst, 0, sizeof dst);

    int id = dma_copy_1d((uint32_t)src, (uint32_t)tcdm_buf, sizeof src, 1);
    uint32_t err = dma_wait(id);
    if (err)
        return 0x200 | (int)err;
    int bad = 0;
    for (uint32_t i = 0; i < N_WORDS; i += 37)      /* spot-check TCDM through the core */
        bad += tcdm_buf[i] != pattern(i);

    id = dma_copy_1d((uint32_t)dst, (uint32_t)tcdm_buf, sizeof dst, 0);
    err = dma_wait(id);
    if (err)
        return 0x200 | (int)err;
    for (uint32_t i = 0; i < N_WORDS; i++)
        bad += dst[i] != pattern(i);
    if (memcmp(dst, src, sizeof src) != 0 && !bad)
        bad = 1;
    hal_printf("dma_copy: %u bytes L2->TCDM->L2 %s (%d mismatches)\n",
               (unsigned)sizeof src, bad ? "FAILED" : "OK", bad);
    return bad;
}
