"""A native instruction counter for unicorn: a 5-byte machine-code hook.

Counting the instructions the emulator retires is what makes the core's time exact, and a
Python hook per translation block costs ~0.3-0.5 us, i.e. 15-20x the speed of the
emulated code itself. unicorn hooks are plain C function pointers, so the counter can be a
C function without a compiler: on x86-64 System V the hook
``void hook(uc_engine *uc, uint64_t address, uint32_t size, void *user_data)`` receives
``user_data`` in ``rcx``, and ``add qword ptr [rcx], 1; ret`` (``48 83 01 01 c3``) counts
one instruction into a ``uint64_t`` we own.

The code is written into an anonymous page which is then made read+execute (never
writable and executable at once), and called once through ctypes as a self-test. On any
other machine, or if the page cannot be made executable, :func:`native_counter` returns
None and the core counts with a Python block hook instead (same results, slower).
"""
from __future__ import annotations

import ctypes
import mmap
import platform
import sys

_STUB_X86_64 = bytes([0x48, 0x83, 0x01, 0x01, 0xC3])   # add qword [rcx], 1 ; ret
_state: dict[str, object] = {}


def native_counter() -> int | None:
    """Address of the counting hook, or None where it is not available."""
    if "addr" in _state:
        return _state["addr"]  # type: ignore[return-value]
    _state["addr"] = None
    if not (sys.platform.startswith("linux") and platform.machine() in ("x86_64", "AMD64")):
        return None
    try:
        page = mmap.mmap(-1, mmap.PAGESIZE, prot=mmap.PROT_READ | mmap.PROT_WRITE)
        page.write(_STUB_X86_64)
        addr = ctypes.addressof(ctypes.c_char.from_buffer(page))
        libc = ctypes.CDLL(None, use_errno=True)
        libc.mprotect.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int)
        if libc.mprotect(addr, mmap.PAGESIZE, mmap.PROT_READ | mmap.PROT_EXEC) != 0:
            return None
        fn = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_uint64, ctypes.c_uint32,
                              ctypes.c_void_p)(addr)
        probe = ctypes.c_uint64(41)
        fn(None, 0, 0, ctypes.addressof(probe))
        if probe.value != 42:
            return None
    except (OSError, ValueError, AttributeError, TypeError):
        return None
    _state["page"] = page          # keep the mapping alive for the whole process
    _state["addr"] = addr
    return addr


def add_counter_hook(uc, counter: ctypes.c_uint64) -> bool:
    """Install the native hook on every instruction of ``uc``; False if unavailable."""
    addr = native_counter()
    if addr is None:
        return False
    from unicorn import UC_HOOK_CODE, UcError
    from unicorn.unicorn_py3.arch.types import uc_hook_h
    from unicorn.unicorn_py3.unicorn import uclib

    handle = uc_hook_h()
    status = uclib.uc_hook_add(uc._uch, ctypes.byref(handle), UC_HOOK_CODE,
                               ctypes.c_void_p(addr), ctypes.c_void_p(ctypes.addressof(counter)),
                               ctypes.c_uint64(1), ctypes.c_uint64(0))
    if status != 0:
        raise UcError(status)
    return True
