#!/usr/bin/env python3
"""Re-create the vendored third-party RTL (rtl/third_party/<package>/) from repository
snapshots, or check that the vendored files are unmodified.

SOURCES.yaml (next to this script) records, per package, the repository, the release it
comes from, its commit and every vendored file with its SHA-256. The files are copies of
the repository's files at that commit, byte for byte (the Solderpad Hardware License
allows redistribution with its text and the notices kept: LICENSE comes along).

    python rtl/third_party/vendor.py --check
    python rtl/third_party/vendor.py --snapshot hwpe-ctrl=/path/to/hwpe-ctrl.git [...]
    python rtl/third_party/vendor.py --snapshot hwpe-ctrl=/path --update   # new hashes

A snapshot is a git directory (bare or not) holding the recorded commit, or a plain folder
with that commit's files. Exit code 1 when a file differs from its recorded hash.
"""
from __future__ import annotations

import argparse
import hashlib
import subprocess
import sys
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent
SOURCES = HERE / "SOURCES.yaml"


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def load() -> dict:
    return yaml.safe_load(SOURCES.read_text())["packages"]


NOTICE = ("// Patched copy made by rtl/third_party/vendor.py (tlm-cosim) from {name}/{file} at "
          "commit {commit}:\n// {why}\n// Change: {old!r} -> {new!r}\n")


def patched(name: str, pkg: dict, patch: dict, original: bytes) -> bytes:
    """The patched copy of ``patch['file']``: a notice of the change, then the original with
    its one recorded replacement."""
    old, new = patch["replace"]
    text = original.decode()
    if text.count(old) != 1:
        raise SystemExit(f"{name}/{patch['file']}: {old!r} occurs {text.count(old)} times, "
                         "expected once")
    notice = NOTICE.format(name=name, file=patch["file"], commit=pkg["commit"],
                           why=patch["why"], old=old, new=new)
    return (notice + text.replace(old, new)).encode()


def patch_path(name: str, patch: dict) -> Path:
    return HERE / "patches" / name / patch["file"]


def check(packages: dict | None = None) -> list[str]:
    """Problems with the vendored files (empty: all present and unmodified, every patched
    copy equal to its original with the recorded change)."""
    packages = packages or load()
    problems = []
    for name, pkg in packages.items():
        for rel, digest in pkg["files"].items():
            p = HERE / name / rel
            if not p.is_file():
                problems.append(f"{name}/{rel}: missing")
            elif sha256(p.read_bytes()) != digest:
                problems.append(f"{name}/{rel}: modified (SHA-256 differs from SOURCES.yaml)")
        for patch in pkg.get("patches") or []:
            out, orig = patch_path(name, patch), HERE / name / patch["file"]
            if not out.is_file() or not orig.is_file():
                problems.append(f"patches/{name}/{patch['file']}: missing")
            elif (out.read_bytes() != patched(name, pkg, patch, orig.read_bytes())
                  or sha256(out.read_bytes()) != patch["sha256"]):
                problems.append(f"patches/{name}/{patch['file']}: differs from the original "
                                "with the recorded change")
    return problems


def _read(snapshot: Path, commit: str, rel: str) -> bytes:
    if (snapshot / "HEAD").is_file() or (snapshot / ".git").exists():
        gitdir = snapshot if (snapshot / "HEAD").is_file() else snapshot / ".git"
        return subprocess.run(["git", "--git-dir", str(gitdir), "show", f"{commit}:{rel}"],
                              check=True, capture_output=True).stdout
    return (snapshot / rel).read_bytes()


def vendor(name: str, snapshot: Path, update: bool = False) -> list[str]:
    """Copy package ``name``'s recorded files from ``snapshot``; return the mismatches."""
    data = yaml.safe_load(SOURCES.read_text())
    pkg = data["packages"][name]
    bad = []
    for rel, digest in pkg["files"].items():
        blob = _read(snapshot, pkg["commit"], rel)
        if digest and sha256(blob) != digest and not update:
            bad.append(f"{name}/{rel}: the snapshot's file differs from the recorded hash")
            continue
        out = HERE / name / rel
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_bytes(blob)
        pkg["files"][rel] = sha256(blob)
    for patch in pkg.get("patches") or []:
        blob = patched(name, pkg, patch, _read(snapshot, pkg["commit"], patch["file"]))
        if patch["sha256"] and sha256(blob) != patch["sha256"] and not update:
            bad.append(f"patches/{name}/{patch['file']}: differs from the recorded hash")
            continue
        out = patch_path(name, patch)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_bytes(blob)
        patch["sha256"] = sha256(blob)
    if update:
        text = SOURCES.read_text()
        head = text[:text.index("packages:")]
        SOURCES.write_text(head + yaml.safe_dump({"packages": data["packages"]}, sort_keys=False,
                                                 width=100))
    return bad


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true", help="check the vendored files' hashes")
    ap.add_argument("--snapshot", action="append", default=[], metavar="PACKAGE=PATH",
                    help="re-create PACKAGE's files from the snapshot at PATH")
    ap.add_argument("--update", action="store_true", help="record new hashes")
    a = ap.parse_args(argv)
    problems = []
    for item in a.snapshot:
        name, _, path = item.partition("=")
        problems += vendor(name, Path(path), a.update)
    if a.check or not a.snapshot:
        problems += check()
    for p in problems:
        print(p, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
