"""The bounded reader (tlm/files.py): regular files only, never blocking, a cap per kind,
UTF-8 errors that name the byte and the line, numpy data without pickles or zip bombs."""
from __future__ import annotations

import io
import os
import threading
import zipfile

import numpy as np
import pytest

from tlm import files
from tlm.files import LIMITS, FileAccessError, load_npy, load_npz, read_bytes, read_text


def test_a_regular_file_is_read_whole(tmp_path):
    f = tmp_path / "a.bin"
    f.write_bytes(b"\x00\x01hello")
    assert read_bytes(f, "data") == b"\x00\x01hello"
    f.write_text("name: x\n", encoding="utf-8")
    assert read_text(str(f), "scenario") == "name: x\n"


def test_a_fifo_is_refused_at_once_not_waited_on(tmp_path):
    fifo = tmp_path / "f.yaml"
    os.mkfifo(fifo)
    got: list[BaseException] = []

    def read() -> None:
        try:
            read_text(fifo, "scenario")
        except BaseException as e:  # noqa: BLE001 - handed to the test thread
            got.append(e)
    t = threading.Thread(target=read, daemon=True)
    t.start()
    t.join(10)
    assert not t.is_alive(), "the reader blocked on a FIFO with no writer"
    assert isinstance(got[0], FileAccessError)
    assert got[0].path == str(fifo) and "a FIFO, not a regular file" in got[0].reason


@pytest.mark.parametrize("path, what", [("/dev/zero", "a device"), ("/dev/null", "a device"),
                                        ("/tmp", "a folder")])
def test_devices_and_folders_are_refused_naming_the_path(path, what):
    with pytest.raises(FileAccessError) as e:
        read_bytes(path, "data")
    assert str(e.value).startswith(f"{path}: ") and what in e.value.reason


@pytest.mark.parametrize("path", ["/proc/self/environ", "/proc/self/status", "/proc/cpuinfo"])
def test_proc_files_are_refused_though_they_look_regular(path):
    with pytest.raises(FileAccessError, match=r"/proc or /sys file") as e:
        read_bytes(path, "data")
    assert e.value.path == path


def test_a_link_into_proc_is_refused(tmp_path):
    link = tmp_path / "env.bin"
    link.symlink_to("/proc/self/environ")
    with pytest.raises(FileAccessError, match=r"/proc or /sys file"):
        read_bytes(link, "data")


def test_a_missing_file_names_the_path_and_the_kind(tmp_path):
    with pytest.raises(FileAccessError) as e:
        read_bytes(tmp_path / "nope.elf", "firmware")
    assert e.value.path == str(tmp_path / "nope.elf")
    assert e.value.reason == "cannot read the firmware ELF: No such file or directory"


def test_a_file_over_its_kind_cap_is_refused_before_reading(tmp_path):
    cap = LIMITS["key"].max_bytes
    f = tmp_path / "big.key"
    with open(f, "wb") as fh:           # sparse: the size is there, the bytes are not read
        fh.truncate(cap + 1)
    with pytest.raises(FileAccessError) as e:
        read_bytes(f, "key")
    assert f"{cap + 1:,} bytes, more than the 64 KiB a key file may have" in e.value.reason
    with open(f, "r+b") as fh:
        fh.truncate(cap)
    assert len(read_bytes(f, "key")) == cap        # the cap itself is allowed


def test_every_kind_has_a_positive_cap_and_a_name():
    assert set(LIMITS) >= {"scenario", "platform", "sweep", "portmap", "set_value", "key", "firmware",
                           "data", "onnx", "program", "rtl_source", "manifest", "package_data"}
    for kind, lim in LIMITS.items():
        assert lim.max_bytes > 0 and lim.what, kind
    with pytest.raises(KeyError, match="unknown file kind 'nope'"):
        read_bytes("/etc/hostname", "nope")


def test_text_that_is_not_utf8_names_the_byte_and_its_line(tmp_path):
    f = tmp_path / "s.yaml"
    f.write_bytes(b"a: 1\nb: 2\nc: \xff\n")
    with pytest.raises(FileAccessError) as e:
        read_text(f, "scenario")
    assert e.value.reason == "the scenario file is not UTF-8 text (byte 0xff at line 3)"
    assert e.value.line == 3


def test_a_nul_byte_in_the_name_is_a_file_access_error():
    with pytest.raises(FileAccessError, match="unusable file name"):
        read_bytes("a\0b", "data")


def test_npy_reads_without_pickles(tmp_path):
    f = tmp_path / "a.npy"
    np.save(f, np.arange(6, dtype=np.int16).reshape(2, 3))
    assert load_npy(f).tolist() == [[0, 1, 2], [3, 4, 5]]
    np.save(f, np.array([{"x": 1}], dtype=object), allow_pickle=True)
    with pytest.raises(FileAccessError, match="not a .npy array"):
        load_npy(f)
    f.write_bytes(b"not numpy at all")
    with pytest.raises(FileAccessError, match="not a .npy array"):
        load_npy(f)


def test_npz_reads_its_arrays(tmp_path):
    f = tmp_path / "w.npz"
    np.savez(f, a=np.ones(3, np.uint8), b=np.zeros((2, 2), np.int32))
    got = load_npz(f)
    assert sorted(got) == ["a", "b"] and got["b"].shape == (2, 2)


def test_an_npz_that_unpacks_past_the_cap_is_refused(tmp_path, monkeypatch):
    """A zip bomb: a small archive whose member declares more than the cap."""
    monkeypatch.setitem(LIMITS, "data", files.Limit(1 << 20, "data file"))
    buf = io.BytesIO()
    arr = io.BytesIO()
    np.save(arr, np.zeros(2 << 20, np.uint8))          # 2 MiB of zeros compress to ~2 KiB
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("a.npy", arr.getvalue())
    f = tmp_path / "bomb.npz"
    f.write_bytes(buf.getvalue())
    assert f.stat().st_size < 64 << 10
    with pytest.raises(FileAccessError, match="unpacks into 2,097,280 bytes, more than the 1 MiB"):
        load_npz(f)


def test_fmt_size():
    assert [files.fmt_size(n) for n in (4 << 20, 64 << 10, 1 << 30, 300)] == ["4 MiB", "64 KiB", "1 GiB",
                                                                             "300 bytes"]


def test_read_tail_reads_only_the_end(tmp_path):
    f = tmp_path / "build.log"
    f.write_bytes(b"x" * 100_000 + b"the error\n")
    assert files.read_tail(f, 10) == b"the error\n"
    assert files.read_tail(f, 1 << 20) == f.read_bytes()
    with pytest.raises(FileAccessError, match="a device"):
        files.read_tail("/dev/zero", 10)
