"""unicorn, the emulator under the SOC core: an optional extra ("iss")."""
try:  # unicorn is an optional extra ("iss"); the core's constructor says how to get it
    import unicorn as uc
    from unicorn import riscv_const as rv
except ImportError:  # pragma: no cover - exercised only without the extra
    uc = None
    rv = None

PAGE = 0x1000
MASK32 = 0xFFFFFFFF

# Stop reasons of one emulator run
_R_COUNT, _R_IO, _R_WFI, _R_FAULT, _R_EXIT, _R_REMAP = range(6)
