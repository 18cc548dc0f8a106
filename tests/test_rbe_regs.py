"""RBE HWPE register file: job queue, busy, ignored writes, soft clear, validation codes."""
import re
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from components.rbe import (ACQUIRE_BUSY, REGMAP, Mode, RbeError, RbeJob, RbeRegisterFile,
                            decode_job, encode_job, run_job)
from components.rbe.layout import from_bytes, unpack_outputs
from components.rbe.stimuli import ByteMemory, place_layer, random_layer

BASE, SIZE = 0x1000_0000, 0x2_0000  # a 128 KiB TCDM window
TRIGGER, ACQUIRE, FINISHED, STATUS, RUNNING, SOFT_CLEAR = 0x00, 0x04, 0x08, 0x0C, 0x10, 0x14
OFF = {r.name: r.offset for r in REGMAP.job}


def status_bit(rf: RbeRegisterFile, name: str) -> int:
    return REGMAP.status(name).get(rf.read(STATUS))


def small_job(**kw) -> RbeJob:
    args = dict(x_addr=BASE, w_addr=BASE + 0x4000, nq_addr=BASE + 0x8000, y_addr=BASE + 0x9000,
                h_out=3, w_out=3, k_in=32, k_out=32, w_bits=4, i_bits=4, o_bits=4,
                mode=Mode.CONV3X3, shift=3, relu=True)
    args.update(kw)
    return RbeJob.dense(**args)


def program(rf: RbeRegisterFile, job: RbeJob, trigger: bool = True) -> int:
    jid = rf.read(ACQUIRE)
    assert jid != ACQUIRE_BUSY
    for off, val in encode_job(job):
        rf.write(off, val)
    if trigger:
        rf.write(TRIGGER, 0)
    return jid


def test_register_offsets_follow_the_hwpe_convention():
    assert [REGMAP.control[n].offset for n in
            ("TRIGGER", "ACQUIRE", "FINISHED", "STATUS", "RUNNING_JOB", "SOFT_CLEAR")] == \
        [0x00, 0x04, 0x08, 0x0C, 0x10, 0x14]
    assert REGMAP.job_base == 0x40
    assert [r.offset for r in REGMAP.job] == list(range(0x40, 0x40 + 4 * len(REGMAP.job), 4))


@settings(max_examples=50, deadline=None)
@given(st.builds(RbeJob, x_addr=st.integers(0, 2**32 - 1), w_addr=st.integers(0, 2**32 - 1),
                 nq_addr=st.integers(0, 2**32 - 1), y_addr=st.integers(0, 2**32 - 1),
                 h_out=st.integers(0, 2**16 - 1), w_out=st.integers(0, 2**16 - 1),
                 k_in=st.integers(0, 2**16 - 1), k_out=st.integers(0, 2**16 - 1),
                 x_row_stride=st.integers(0, 2**32 - 1), x_pix_stride=st.integers(0, 2**32 - 1),
                 y_row_stride=st.integers(0, 2**32 - 1), y_pix_stride=st.integers(0, 2**32 - 1),
                 w_bits=st.integers(0, 15), i_bits=st.integers(0, 15), o_bits=st.integers(0, 15),
                 mode=st.integers(0, 3), shift=st.integers(0, 31), relu=st.booleans()))
def test_encode_decode_round_trip(job):
    values = [v for _, v in encode_job(job)]
    assert all(0 <= v < 2**32 for v in values)
    assert decode_job(values) == job


def test_acquire_returns_ids_then_busy_when_both_contexts_are_used():
    rf = RbeRegisterFile(BASE, SIZE)
    assert rf.read(ACQUIRE) == 0
    assert rf.read(ACQUIRE) == ACQUIRE_BUSY  # one context is already being programmed
    assert status_bit(rf, "ACQUIRED") == 1 and status_bit(rf, "FULL") == 1
    for off, val in encode_job(small_job()):
        rf.write(off, val)
    rf.write(TRIGGER, 0)
    assert program(rf, small_job()) == 1
    assert rf.read(ACQUIRE) == ACQUIRE_BUSY  # two jobs queued
    assert status_bit(rf, "QUEUED") == 1 and status_bit(rf, "FULL") == 1
    jid, job = rf.pop_job()
    assert jid == 0 and isinstance(job, RbeJob)
    assert rf.read(RUNNING) == 0 and status_bit(rf, "RUNNING") == 1
    assert rf.read(ACQUIRE) == ACQUIRE_BUSY  # one running, one queued
    assert rf.pop_job() is None  # the engine runs one job at a time
    assert rf.job_done(0) is True
    assert rf.read(FINISHED) == 1
    assert rf.read(ACQUIRE) == 2  # context 0 is free again
    assert rf.job_done(0) is False  # not running any more


def test_two_queued_jobs_run_back_to_back_with_two_events():
    rng = np.random.default_rng(1)
    mem = ByteMemory(SIZE, base=BASE)
    layers = [random_layer(rng, h_out=4, w_out=4, k_in=32, k_out=64, w_bits=3, i_bits=5,
                           o_bits=4, mode=m) for m in (Mode.CONV3X3, Mode.CONV1X1)]
    jobs = [place_layer(layers[0], mem, BASE), place_layer(layers[1], mem, BASE + 0x8000)]
    rf = RbeRegisterFile(BASE, SIZE)
    ids = [program(rf, j) for j in jobs]
    assert ids == [0, 1]
    events = []
    while (nxt := rf.pop_job()) is not None:  # a minimal untimed wrapper
        jid, job = nxt
        assert isinstance(job, RbeJob)
        run_job(job, mem.read, mem.write)
        if rf.job_done(jid):
            events.append(jid)
    assert events == [0, 1]
    assert rf.read(FINISHED) == 2 and rf.read(RUNNING) == 1
    assert rf.read(STATUS) & 0xF == 0  # idle, nothing queued or acquired
    for layer, job in zip(layers, jobs):
        y0, y1 = job.y_extent()
        y = from_bytes(mem.read(y0, y1 - y0), (job.h_out, job.w_out, job.kout_tiles, job.o_bits))
        np.testing.assert_array_equal(unpack_outputs(y), layer.golden)


def test_write_without_acquire_is_ignored_and_flagged():
    rf = RbeRegisterFile(BASE, SIZE)
    rf.write(OFF["X_ADDR"], 0x1234)
    assert rf.read(OFF["X_ADDR"]) == 0
    assert status_bit(rf, "ERR_WRITE_IGNORED") == 1


def test_writes_to_contexts_in_use_are_ignored_and_the_queued_job_is_intact():
    rf = RbeRegisterFile(BASE, SIZE)
    j0, j1 = small_job(), small_job(shift=7, o_bits=6)
    program(rf, j0)
    program(rf, j1)
    for off, _ in encode_job(j0):
        rf.write(off, 0xDEADBEEF)
    assert status_bit(rf, "ERR_WRITE_IGNORED") == 1
    assert rf.pop_job() == (0, j0)
    rf.write(OFF["PRECISION"], 0)  # context 1 queued, context 0 running: still ignored
    rf.job_done(0)
    assert rf.pop_job() == (1, j1)


def test_trigger_without_job_is_ignored_with_error_bit():
    rf = RbeRegisterFile(BASE, SIZE)
    rf.write(TRIGGER, 0)
    assert status_bit(rf, "ERR_TRIGGER_NO_JOB") == 1
    assert rf.pop_job() is None
    assert rf.read(ACQUIRE) == 0  # no job ID was consumed


def test_error_bits_are_write_one_to_clear():
    rf = RbeRegisterFile(BASE, SIZE)
    rf.write(TRIGGER, 0)
    rf.write(OFF["Y_ADDR"], 1)
    assert status_bit(rf, "ERR_TRIGGER_NO_JOB") and status_bit(rf, "ERR_WRITE_IGNORED")
    rf.write(STATUS, REGMAP.status("ERR_TRIGGER_NO_JOB").mask)
    assert status_bit(rf, "ERR_TRIGGER_NO_JOB") == 0 and status_bit(rf, "ERR_WRITE_IGNORED") == 1
    rf.write(STATUS, 0xFFFFFFFF, byte_enable=0b0001)  # error bits live in byte 2: no effect
    assert status_bit(rf, "ERR_WRITE_IGNORED") == 1
    rf.write(STATUS, 0xFFFFFFFF)
    assert rf.read(STATUS) == 0


@pytest.mark.parametrize("offset", [0x18, 0x3C, 0x41, 0x40 + 4 * len(REGMAP.job), 0x400])
def test_reserved_and_unaligned_offsets(offset):
    rf = RbeRegisterFile(BASE, SIZE)
    rf.read(ACQUIRE)
    assert rf.read(offset) == 0
    assert status_bit(rf, "ERR_BAD_ACCESS") == 1
    rf.write(STATUS, 0xFFFFFFFF)
    rf.write(offset, 0xFFFFFFFF)
    assert status_bit(rf, "ERR_BAD_ACCESS") == 1
    assert all(rf.read(r.offset) == 0 for r in REGMAP.job)  # nothing leaked into a register


@pytest.mark.parametrize("offset", [ACQUIRE, FINISHED, RUNNING])
def test_writes_to_read_only_registers_are_ignored(offset):
    rf = RbeRegisterFile(BASE, SIZE)
    rf.write(offset, 5)
    assert status_bit(rf, "ERR_BAD_ACCESS") == 1
    assert rf.read(FINISHED) == 0 and rf.read(RUNNING) == 0 and rf.read(ACQUIRE) == 0


def test_byte_enables_merge_into_job_registers():
    rf = RbeRegisterFile(BASE, SIZE)
    rf.read(ACQUIRE)
    rf.write(OFF["X_ADDR"], 0x11223344)
    rf.write(OFF["X_ADDR"], 0xAABBCCDD, byte_enable=0b0110)
    assert rf.read(OFF["X_ADDR"]) == 0x11BBCC44


def test_soft_clear_aborts_everything():
    rf = RbeRegisterFile(BASE, SIZE)
    program(rf, small_job())
    program(rf, small_job())
    jid, _ = rf.pop_job()
    epoch = rf.epoch
    rf.write(TRIGGER, 0)
    rf.write(SOFT_CLEAR, 1)
    assert rf.read(STATUS) == 0 and rf.read(FINISHED) == 0 and rf.read(RUNNING) == 0
    assert rf.pop_job() is None
    assert rf.job_done(jid, epoch) is False  # the aborted job raises no event
    assert rf.read(ACQUIRE) == 0  # IDs restart
    assert decode_job([rf.read(r.offset) for r in REGMAP.job]) == small_job()  # kept (value != 0)
    # a new job with the recycled ID 0 is not finished by the stale completion either
    rf.write(TRIGGER, 0)
    assert rf.pop_job()[0] == 0
    assert rf.job_done(0, epoch) is False
    assert rf.job_done(0, rf.epoch) is True


def test_soft_clear_with_zero_also_zeroes_job_registers():
    rf = RbeRegisterFile(BASE, SIZE)
    program(rf, small_job(), trigger=False)
    rf.write(SOFT_CLEAR, 0)
    rf.read(ACQUIRE)
    assert all(rf.read(r.offset) == 0 for r in REGMAP.job)


def test_job_ids_wrap_at_256():
    rf = RbeRegisterFile(BASE, SIZE)
    seen = []
    for _ in range(260):
        seen.append(program(rf, small_job()))
        jid, _ = rf.pop_job()
        assert rf.job_done(jid)
    assert seen[:3] == [0, 1, 2] and seen[255] == 255 and seen[256] == 0
    assert rf.read(FINISHED) == 260


def test_job_registers_persist_per_context():
    """Contexts keep their values: the third job can reuse context 0's registers."""
    rf = RbeRegisterFile(BASE, SIZE)
    program(rf, small_job(shift=9))
    program(rf, small_job(shift=1))
    rf.job_done(rf.pop_job()[0])
    assert rf.read(ACQUIRE) == 2
    rf.write(TRIGGER, 0)  # re-commit context 0 unchanged
    rf.job_done(rf.pop_job()[0])
    assert rf.pop_job() == (2, small_job(shift=9))


BAD_JOBS = [
    (RbeError.W_BITS, dict(w_bits=1)), (RbeError.W_BITS, dict(w_bits=9)),
    (RbeError.I_BITS, dict(i_bits=1)), (RbeError.I_BITS, dict(i_bits=9)),
    (RbeError.O_BITS, dict(o_bits=1)), (RbeError.O_BITS, dict(o_bits=9)),
    (RbeError.K_IN, dict(k_in=48)), (RbeError.K_IN, dict(k_in=0)), (RbeError.K_IN, dict(k_in=4128)),
    (RbeError.K_OUT, dict(k_out=16)), (RbeError.K_OUT, dict(k_out=0)),
    (RbeError.SIZE, dict(h_out=0)), (RbeError.SIZE, dict(w_out=0)),
    (RbeError.MODE, dict(mode=2)), (RbeError.MODE, dict(mode=3)),
    (RbeError.ALIGN, dict(x_addr=BASE + 2)), (RbeError.ALIGN, dict(y_pix_stride=18)),
    (RbeError.X_RANGE, dict(x_addr=BASE - 4)), (RbeError.X_RANGE, dict(x_addr=BASE + SIZE - 64)),
    (RbeError.W_RANGE, dict(w_addr=BASE + SIZE - 4)), (RbeError.W_RANGE, dict(w_addr=0)),
    (RbeError.NQ_RANGE, dict(nq_addr=BASE + SIZE - 188)),
    (RbeError.Y_RANGE, dict(y_addr=BASE + SIZE)), (RbeError.Y_RANGE, dict(y_row_stride=0x10000)),
]


@pytest.mark.parametrize("code,change", BAD_JOBS,
                         ids=[f"{c.name}-{next(iter(d))}={next(iter(d.values()))}"
                              for c, d in BAD_JOBS])
def test_every_validation_error_code(code, change):
    job = RbeJob(**{**small_job().__dict__, **change})
    rf = RbeRegisterFile(BASE, SIZE)
    jid = program(rf, job)
    assert rf.pop_job() == (jid, code)
    assert status_bit(rf, "ERR_JOB_INVALID") == 0  # reported when the job finishes
    assert rf.job_done(jid) is True  # an invalid job still ends with its event
    assert status_bit(rf, "ERR_JOB_INVALID") == 1
    assert status_bit(rf, "LAST_ERROR") == int(code)
    assert rf.read(FINISHED) == 1


def test_a_valid_job_after_an_invalid_one_clears_last_error():
    rf = RbeRegisterFile(BASE, SIZE)
    program(rf, small_job(w_bits=9))
    program(rf, small_job())
    rf.job_done(rf.pop_job()[0])
    assert status_bit(rf, "LAST_ERROR") == RbeError.W_BITS
    jid, job = rf.pop_job()
    assert isinstance(job, RbeJob)
    rf.job_done(jid)
    assert status_bit(rf, "LAST_ERROR") == 0 and status_bit(rf, "ERR_JOB_INVALID") == 1


def test_operands_ending_exactly_at_the_tcdm_end_are_legal():
    job = small_job(nq_addr=BASE + SIZE - 32 * 6)
    rf = RbeRegisterFile(BASE, SIZE)
    jid = program(rf, job)
    assert rf.pop_job() == (jid, job)


def test_every_error_code_is_covered():
    assert {c for c, _ in BAD_JOBS} == set(RbeError) - {RbeError.OK}


def test_docs_list_every_register_field_and_error_code():
    doc = (Path(__file__).resolve().parents[1] / "docs" / "rbe.md").read_text()
    names = [*REGMAP.control, *(r.name for r in REGMAP.job), *REGMAP.status_bits,
             *(f.name for r in REGMAP.job for f in r.fields), *(c.name for c in RbeError)]
    missing = [n for n in names if not re.search(rf"\b{re.escape(n)}\b", doc)]
    assert not missing, f"docs/rbe.md does not mention {missing}"
    for r in REGMAP.job:
        assert f"0x{r.offset:02X}" in doc, r.name
