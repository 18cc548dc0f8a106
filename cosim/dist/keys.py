"""CurveZMQ keys for distributed runs over TCP (``cosim keys DIR --workers N``).

Layout of DIR::

    coordinator.key            public key of the coordinator: copy to every worker host
    coordinator.key_secret     stays on the coordinator host
    worker0.key_secret, ...    one per worker host (holds its public key too)
    worker0.key, ...           public keys of the workers
    authorized/worker0.key     the coordinator's allow list: only these workers get in

To admit a worker made elsewhere, copy its public ``*.key`` into ``authorized/``.
"""
from __future__ import annotations

import argparse
import os
import shutil
import sys
from pathlib import Path

import zmq.auth

from tlm.files import FileAccessError, read_bytes

__all__ = ["generate_keys", "keys_main", "coordinator_keys", "authorized_dir", "load_key", "authorized_keys"]

#: a CurveZMQ key in z85 text: 32 bytes -> 40 characters
_Z85_LEN = 40


def generate_keys(directory: str | os.PathLike, workers: int = 1, *,
                  names: list[str] | None = None) -> dict[str, Path]:
    """Create the coordinator key pair and one pair per worker in ``directory`` (kept
    private: mode 0700). Existing key files are left alone. Returns name -> secret file."""
    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    os.chmod(d, 0o700)
    auth = d / "authorized"
    auth.mkdir(exist_ok=True)
    names = names or [f"worker{i}" for i in range(workers)]
    out = {}
    for name in ["coordinator", *names]:
        secret = d / f"{name}.key_secret"
        if not secret.exists():
            zmq.auth.create_certificates(str(d), name)
        os.chmod(secret, 0o600)
        out[name] = secret
        if name != "coordinator":
            shutil.copyfile(d / f"{name}.key", auth / f"{name}.key")
    return out


def coordinator_keys(directory: str | os.PathLike) -> tuple[bytes, bytes]:
    """(public, secret) of the coordinator in a key directory."""
    f = Path(directory) / "coordinator.key_secret"
    if not f.exists():
        raise FileNotFoundError(f"{f} not found: create keys with `cosim keys {directory}`")
    public, secret = load_key(f)
    if secret is None:
        raise FileAccessError(f, "holds no secret-key line (the coordinator's *.key_secret made by `cosim keys`)")
    return public, secret


def _z85_key(value: bytes, path: str | os.PathLike, which: str) -> bytes:
    from zmq.utils import z85
    try:
        if len(value) != _Z85_LEN:
            raise ValueError
        z85.decode(value)
    except (ValueError, KeyError, TypeError):
        raise FileAccessError(path, f"the {which} is not a {_Z85_LEN}-character z85 CurveZMQ key") from None
    return value


def load_key(path: str | os.PathLike) -> tuple[bytes, bytes | None]:
    """(public, secret or None) of a ``zmq.auth`` certificate file, read through the bounded
    reader (tlm.files: a regular file of at most the ``key`` cap; /dev/zero or a FIFO is
    refused at once) and parsed like ``zmq.auth.load_certificate``; a FileAccessError
    naming the file when it holds no well-formed public key."""
    public = secret = None
    for raw in read_bytes(path, "key").splitlines():
        line = raw.strip()
        if line.startswith(b"#"):
            continue
        if line.startswith(b"public-key") and b"=" in line:
            public = line.split(b"=", 1)[1].strip(b" \t'\"")
        elif line.startswith(b"secret-key") and b"=" in line:
            secret = line.split(b"=", 1)[1].strip(b" \t'\"")
    if public is None:
        raise FileAccessError(path, "no public-key line: not a CurveZMQ key file (made by `cosim keys`)")
    return (_z85_key(public, path, "public key"),
            None if secret is None else _z85_key(secret, path, "secret key"))


def authorized_keys(folder: str | os.PathLike) -> tuple[set[bytes], list[str]]:
    """The z85 public keys of the ``*.key`` files in ``folder`` (the coordinator's allow
    list), and one line per file that is not a usable key (said at start: a worker whose
    key file is broken would otherwise only be refused at the connect timeout)."""
    keys: set[bytes] = set()
    problems = []
    for f in sorted(Path(folder).glob("*.key")):
        try:
            public, _ = load_key(f)
        except FileAccessError as e:
            problems.append(str(e))
            continue
        keys.add(public)
    return keys, problems


def authorized_dir(directory: str | os.PathLike) -> Path:
    return Path(directory) / "authorized"


def keys_main(argv: list[str] | None = None) -> int:
    """Entry point of ``cosim keys``."""
    ap = argparse.ArgumentParser(prog="cosim keys", description="Generate CurveZMQ key pairs "
                                 "for a coordinator and its workers.")
    ap.add_argument("directory")
    ap.add_argument("--workers", type=int, default=1, help="number of worker key pairs")
    args = ap.parse_args(argv)
    made = generate_keys(args.directory, args.workers)
    for name, f in made.items():
        print(f"{name}: {f}")
    print(f"give each worker host its NAME.key_secret and coordinator.key; the coordinator "
          f"admits the public keys in {authorized_dir(args.directory)}")
    return 0


if __name__ == "__main__":
    sys.exit(keys_main())
