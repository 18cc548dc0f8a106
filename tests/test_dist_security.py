"""Hardening of the distribution layer against peers that are not (or not only) our workers:
malformed messages are dropped and logged, a HELLO from anyone but the workers the
coordinator started (or the expected CurveZMQ keys) gets no partition, frames over
ZMQ_MAXMSGSIZE disconnect their sender, and a legitimate message over the limit gives a
clear error (cosim/distributed). Real runs, real sockets; every wait has a deadline."""
from __future__ import annotations

import logging
import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import msgpack
import pytest
import zmq

from cosim.distributed import DistOptions, DistributedError, comparable, generate_keys, run_distributed, run_local
from cosim.distributed import protocol as P

REPO = Path(__file__).resolve().parents[1]
RING = "support.dist_platforms:ring"
CFG = {"nodes": 3, "rounds": 12, "seed": 5}
PARTITION = "node0|node1,node2"


def env() -> dict:
    e = dict(os.environ)
    e["PYTHONPATH"] = os.pathsep.join([str(REPO), e.get("PYTHONPATH", "")])
    return e


@pytest.fixture(scope="module")
def reference() -> dict:
    return comparable(run_local(RING, CFG))


def _garbage() -> list[list[bytes]]:
    """What an authorised but broken (or hostile) peer might send: one entry per message."""
    pack = P.pack
    return [
        [pack(42)],                                        # a bare msgpack integer
        [b"\xc1"],                                         # not msgpack at all
        [b""],                                             # an empty frame
        [b"\x91" * 200_000 + b"\x00"],                     # nesting deeper than msgpack allows
        [pack([])],
        [pack(["HELLO"])], [pack([True])], [pack([99, 1])],
        [pack([P.REPORT])],                                # wrong arity
        [pack([P.REPORT, "1", None, None, []])],           # wrong field types
        [pack([P.REPORT, 0, None, None, [[7, 0, 1, 0]]]), b"x"],   # destination out of range
        [pack([P.READY, None, "x"]), b"extra frame"],
        [pack([P.HELLO, P.PROTOCOL_VERSION, b"t", 1, "h" * 5_000_000, None, None, 1])],  # huge string
        [pack([P.HELLO, 1, b"t", 1, "old", None])],        # an older protocol
        [pack([P.RESULT, {"stats": 1}])],
        [pack([P.ERROR, "kind", "well-formed, but from nobody's worker", None, ""])],
        [pack([P.FINISH, 0])],                             # a coordinator's message
    ]


class Intruder:
    """A raw ZeroMQ DEALER on the coordinator's endpoint (optionally a CurveZMQ client)."""

    def __init__(self, endpoint: str, kind: int = zmq.DEALER, curve: tuple | None = None):
        self.ctx = zmq.Context()
        self.sock = self.ctx.socket(kind)
        self.sock.linger = 0
        if curve is not None:
            self.sock.curve_publickey, self.sock.curve_secretkey, self.sock.curve_serverkey = curve
        self.mon = self.sock.get_monitor_socket(zmq.EVENT_CONNECTED | zmq.EVENT_DISCONNECTED)
        self.sock.connect(endpoint)

    def send_all(self, messages: list[list[bytes]]) -> None:
        for m in messages:
            self.sock.send_multipart(m)

    def wait_event(self, event: int, timeout: float) -> bool:
        from zmq.utils.monitor import recv_monitor_message
        end = time.monotonic() + timeout
        while (left := end - time.monotonic()) > 0:
            if self.mon.poll(int(left * 1000) + 1):
                if recv_monitor_message(self.mon)["event"] == event:
                    return True
        return False

    def recv(self, timeout: float) -> list | None:
        if self.sock.poll(int(timeout * 1000)):
            return msgpack.unpackb(self.sock.recv_multipart()[-1], raw=False)
        return None

    def close(self) -> None:
        self.sock.disable_monitor()
        self.mon.close(0)
        self.sock.close(0)
        self.ctx.term()


def _drops(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.getMessage().startswith("dropped a message")]


def test_garbage_from_peers_is_dropped_and_the_run_is_unchanged(tmp_path, caplog, reference):
    """Malformed messages before the workers arrive and during the window loop: each is
    dropped and logged with its sender, the run completes with the single-process hash."""
    ep = f"ipc://{tmp_path}/c.sock"
    garbage = _garbage()
    # one peer per message, so that each is logged (a peer's drops are logged 5 times at most)
    early = [Intruder(ep) for _ in garbage]
    late = [Intruder(ep) for _ in garbage]
    flood, req = Intruder(ep), Intruder(ep, zmq.REQ)
    try:
        for i, m in zip(early, garbage):
            i.send_all([m])                        # queued: delivered once the coordinator binds

        def on_start(_ws):                         # handshake done: the window loop follows
            for i, m in zip(late, _garbage()):
                i.send_all([m])
            flood.send_all(_garbage() * 3)
            req.sock.send(P.pack(1))               # a REQ peer: empty delimiter frame first
        with caplog.at_level(logging.WARNING, logger="cosim.distributed"):
            r = run_distributed(RING, CFG, PARTITION,
                                options=DistOptions(bind=ep, launch=True, on_start=on_start))
    finally:
        for i in early + late + [flood, req]:
            i.close()
    assert comparable(r) == reference
    drops = _drops(caplog)
    for what in ("not msgpack", "not a message: a int", "not a message: an empty list",
                 "unexpected message kind 'HELLO'", "unexpected message kind True",
                 "unexpected message kind 99", "REPORT with 0 field(s), expected 4",
                 "REPORT field 1 is malformed (str '1')", "REPORT names a destination beyond worker 1",
                 "READY carries 1 unexpected payload frame(s)",
                 "HELLO field 4 is malformed",          # the 5 MB host name
                 "HELLO speaking protocol 1", "RESULT field 1 is malformed",
                 "ERROR from a peer that holds no partition", "unexpected message kind 5"):
        assert any(what in d for d in drops), (what, drops)
    assert all("from an unknown peer (identity" in d for d in drops)
    # the early ones were all read in the handshake; the late ones during the window loop
    # (87 windows: each peer's queue is read in turn, so they are too, well before the end)
    assert len(drops) > len(garbage)
    # a peer's drops are logged 5 times at most: a flood cannot flood the log
    per_peer: dict[bytes, int] = {}
    for rec in caplog.records:
        if rec.getMessage().startswith("dropped a message"):
            per_peer[rec.args[1]] = per_peer.get(rec.args[1], 0) + 1     # the identity
    assert max(per_peer.values()) <= 5


def test_an_intruder_hello_before_the_workers_gets_no_partition(tmp_path, caplog, reference):
    """A HELLO that arrives before the real workers (well-formed, right protocol, no secret
    or a wrong one) is refused with an ABORT; the partitions go to the workers the
    coordinator started, which prove it with the secret in their environment."""
    ep = f"ipc://{tmp_path}/c.sock"
    first, second = Intruder(ep), Intruder(ep)
    try:
        first.send_all([[P.pack([P.HELLO, P.PROTOCOL_VERSION, b"intruder", 1, "evil", 0, None,
                                 P.DEFAULT_MAX_MESSAGE])]])
        second.send_all([[P.pack([P.HELLO, P.PROTOCOL_VERSION, b"guess", 2, "evil", 1, "0" * 32,
                                  P.DEFAULT_MAX_MESSAGE])]])
        with caplog.at_level(logging.WARNING, logger="cosim.distributed"):
            r = run_distributed(RING, CFG, PARTITION, options=DistOptions(bind=ep, launch=True))
        answers = [first.recv(10.0), second.recv(10.0)]
    finally:
        first.close()
        second.close()
    assert comparable(r) == reference
    assert [a[0] for a in answers] == [P.ABORT, P.ABORT], answers      # never a SETUP
    assert all("no valid run secret" in a[1] for a in answers)
    assert sum("refused: no valid run secret" in d for d in _drops(caplog)) == 2
    assert all(w["host"] != "evil" for w in r["manifest"]["workers"])


def test_a_malformed_message_from_a_worker_that_holds_a_partition_ends_the_run(tmp_path):
    """Dropping it would leave the run waiting for that worker until round_timeout: a worker
    of the run that breaks the protocol ends it at once, named (kind 'protocol')."""
    ep = f"ipc://{tmp_path}/c.sock"
    fake = Intruder(ep)        # without keys an ipc:// worker the coordinator did not start is
    result: dict = {}          # taken in arrival order (docs/distributed.md)

    def play() -> None:
        fake.send_all([[P.pack([P.HELLO, P.PROTOCOL_VERSION, b"fake", 1, "here", 0, None,
                                P.DEFAULT_MAX_MESSAGE])]])
        result["setup"] = fake.recv(30.0)
        fake.send_all([[P.pack([P.REPORT, "not a window"])]])
    t = threading.Thread(target=play)
    t.start()
    t0 = time.monotonic()
    try:
        with pytest.raises(DistributedError) as ei:
            run_distributed(RING, CFG, "node0,node1,node2", options=DistOptions(
                bind=ep, launch=False, connect_timeout=30.0, round_timeout=300.0))
    finally:
        t.join(30)
        fake.close()
    assert result["setup"][0] == P.SETUP
    assert ei.value.kind == "protocol" and ei.value.worker == "w0"
    assert "sent a malformed message: REPORT" in str(ei.value)
    assert time.monotonic() - t0 < 30          # not round_timeout


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _worker(ep: str, keys: Path, name: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "cosim.distributed.worker", "--connect", ep, "--keys",
                             str(keys), "--name", name, "--connect-timeout", "60"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            env=env(), cwd=REPO)


def test_remote_workers_one_partition_per_expected_key(tmp_path, caplog, reference):
    """Workers started elsewhere (CurveZMQ): each authorised key binds one partition; a
    second worker holding the same key is refused and exits."""
    keys = tmp_path / "keys"
    generate_keys(keys, workers=2)
    ep = f"tcp://127.0.0.1:{_free_port()}"
    out: dict = {}

    def coordinate() -> None:
        try:
            out["r"] = run_distributed(RING, CFG, PARTITION, options=DistOptions(
                bind=ep, keys_dir=keys, launch=False, connect_timeout=120.0))
        except BaseException as e:  # noqa: BLE001 - re-raised below
            out["error"] = e

    with caplog.at_level(logging.WARNING, logger="cosim.distributed"):
        t = threading.Thread(target=coordinate, daemon=True)
        t.start()
        twins = [_worker(ep, keys, "worker0"), _worker(ep, keys, "worker0")]
        try:
            # one twin gets a partition, the other is refused and exits 4
            end = time.monotonic() + 120
            while all(p.poll() is None for p in twins) and time.monotonic() < end:
                time.sleep(0.05)
            refused = [p for p in twins if p.poll() is not None]
            assert refused, "no twin was refused within 120 s"
            assert refused[0].wait() == 4
            assert "already holds a partition" in refused[0].stderr.read()
            other = _worker(ep, keys, "worker1")
            t.join(timeout=300)
            assert not t.is_alive(), "the run did not finish within 300 s"
            assert other.wait(timeout=30) == 0
        finally:
            for p in twins + ([other] if "other" in locals() else []):
                p.kill()
                p.wait()
    if "error" in out:
        raise out["error"]
    assert comparable(out["r"]) == reference
    assert any("already holds a partition" in d and "CurveZMQ key" in d for d in _drops(caplog))


def test_a_frame_over_the_limit_disconnects_its_sender(tmp_path, reference):
    """ZMQ_MAXMSGSIZE: libzmq drops a peer that sends a frame over ``max_message`` before
    buffering it; the run goes on."""
    ep = f"ipc://{tmp_path}/c.sock"
    big = Intruder(ep)
    seen: list[bool] = []
    try:
        def on_start(_ws):
            # the coordinator's socket is open until the run ends: a disconnect seen now is
            # libzmq refusing the frame (its I/O thread does it, not this blocked thread)
            big.send_all([[b"\x00" * (2 * 2**20)]])
            seen.append(big.wait_event(zmq.EVENT_DISCONNECTED, 1.5))
        r = run_distributed(RING, CFG, PARTITION, options=DistOptions(
            bind=ep, launch=True, max_message=2**20, on_start=on_start))
    finally:
        big.close()
    assert comparable(r) == reference
    assert seen == [True]


def test_a_legitimate_message_over_the_limit_is_a_clear_error():
    """A worker whose message would exceed the coordinator's limit says so (an ERROR that
    fits) instead of being disconnected and waited for."""
    t0 = time.monotonic()
    with pytest.raises(DistributedError) as ei:
        run_distributed(RING, CFG, PARTITION, options=DistOptions(max_message=600))
    assert time.monotonic() - t0 < 60
    msg = str(ei.value)
    assert ei.value.kind == "raised" and "over the message limit" in msg and "--max-message" in msg


def test_a_setup_over_the_workers_limit_is_a_clear_error():
    """The coordinator checks what it sends against the limit each worker announced."""
    with pytest.raises(DistributedError) as ei:
        run_distributed(RING, {**CFG, "padding": "x" * 300_000}, PARTITION,
                        options=DistOptions(max_message=200_000))
    err = ei.value
    assert err.kind == "size" and err.worker is not None and err.exit_code == 3
    assert "a message for it (SETUP)" in str(err) and "over the message limit" in str(err)


def test_a_worker_drops_malformed_messages_from_its_coordinator(tmp_path):
    """The worker side checks every message too: garbage is dropped and logged; a valid
    ABORT afterwards still ends it (exit 4)."""
    ep = f"ipc://{tmp_path}/fake.sock"
    ctx = zmq.Context()
    router = ctx.socket(zmq.ROUTER)
    router.linger = 0
    router.bind(ep)
    w = subprocess.Popen([sys.executable, "-m", "cosim.distributed.worker", "--connect", ep,
                          "--connect-timeout", "30"], stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE, text=True, env=env(), cwd=REPO)
    try:
        end = time.monotonic() + 60
        hello = None
        while hello is None and time.monotonic() < end:
            if router.poll(100):
                ident, *frames = router.recv_multipart()
                head = P.unpack(frames[0])
                if ident.startswith(b"h:"):
                    router.send_multipart([ident, P.pack([P.PONG])])
                elif head[0] == P.HELLO:
                    hello = (ident, head)
        assert hello is not None, "no HELLO within 60 s"
        ident, head = hello
        assert P.check_from_worker(head, 0, 1) is None and head[6] is None     # no secret: not ours
        for m in [[P.pack(7)], [b"\xc1"], [P.pack([P.SETUP, {"index": "0"}])],
                  [P.pack([P.GRANT, 0, 0, None, [1]])], [P.pack([P.HELLO])]]:
            router.send_multipart([ident, *m])
        router.send_multipart([ident, P.pack([P.ABORT, "enough"])])
        assert w.wait(timeout=30) == 4
        err = w.stderr.read()
    finally:
        w.kill()
        w.wait()
        router.close(0)
        ctx.term()
    assert err.count("dropped a message from the coordinator") == 5, err
    assert "not msgpack" in err and "GRANT announces 2 payload frame(s), carries 0" in err
    assert "Traceback" not in err


# ----- the builders a worker accepts ---------------------------------------------------------------
def test_a_builder_outside_the_allow_list_is_refused_before_anything_starts(monkeypatch):
    from cosim.distributed import PartitionError
    monkeypatch.delenv("TLM_COSIM_BUILDERS")
    with pytest.raises(PartitionError, match=r"builder 'support.dist_platforms:ring' is not allowed.*"
                                             r"tlm_cosim.builders.*TLM_COSIM_BUILDERS"):
        run_distributed(RING, CFG, PARTITION)
    monkeypatch.setenv("TLM_COSIM_BUILDERS", "support.dist_platforms:idle")   # one function only
    with pytest.raises(PartitionError, match="not allowed"):
        run_distributed(RING, CFG, PARTITION)


def test_builders_registered_as_entry_points_are_allowed(tmp_path, monkeypatch):
    from cosim.distributed.partition import allowed_builders, check_builder_allowed
    dist = tmp_path / "third_party_soc-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: third-party-soc\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text("[tlm_cosim.builders]\nmysoc = thirdparty.soc:build\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delenv("TLM_COSIM_BUILDERS")
    assert allowed_builders() == ["cosim.partitioned:build_worker", "thirdparty.soc:build"]
    check_builder_allowed("thirdparty.soc:build")
    check_builder_allowed("cosim.partitioned:build_worker")
    from cosim.distributed import PartitionError
    with pytest.raises(PartitionError, match="'thirdparty.soc:other' is not allowed"):
        check_builder_allowed("thirdparty.soc:other")


def test_a_worker_refuses_a_builder_outside_its_allow_list(tmp_path):
    """Whatever the coordinator names, the worker checks its own allow-list before it
    imports anything: a SETUP naming ``os:system`` gets an ERROR naming the builder."""
    ep = f"ipc://{tmp_path}/fake.sock"
    ctx = zmq.Context()
    router = ctx.socket(zmq.ROUTER)
    router.linger = 0
    router.bind(ep)
    wenv = {k: v for k, v in env().items() if k != "TLM_COSIM_BUILDERS"}
    w = subprocess.Popen([sys.executable, "-m", "cosim.distributed.worker", "--connect", ep,
                          "--connect-timeout", "30"], stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE, text=True, env=wenv, cwd=REPO)
    error = None
    try:
        end = time.monotonic() + 60
        while error is None and time.monotonic() < end:
            if not router.poll(100):
                continue
            ident, *frames = router.recv_multipart()
            head = P.unpack(frames[0])
            if ident.startswith(b"h:"):
                router.send_multipart([ident, P.pack([P.PONG])])
            elif head[0] == P.HELLO:
                router.send_multipart([ident, P.pack([P.SETUP, {
                    "index": 0, "builder": "os:system", "config": {"cmd": "touch pwned"},
                    "groups": [["*"]], "heartbeat_interval": 0.25, "heartbeat_timeout": 3.0,
                    "max_message": P.DEFAULT_MAX_MESSAGE}])])
            elif head[0] == P.ERROR:
                error = head
        assert w.wait(timeout=30) == 3
    finally:
        w.kill()
        w.wait()
        router.close(0)
        ctx.term()
    assert error is not None and error[1] == "setup"
    assert "builder 'os:system' is not allowed" in error[2]
    assert not (REPO / "pwned").exists()


# ----- binding beyond this host ----------------------------------------------------------------------
def test_tcp_without_keys_is_refused_from_the_cli():
    """`cosim run --bind tcp://0.0.0.0:P` without --keys never listens unauthenticated: it
    ends at once (exit 2) saying the endpoint would be reachable from the network."""
    r = subprocess.run([sys.executable, "-m", "cosim.cli", "run", "quickstart", "--processes", "2",
                        "--bind", f"tcp://0.0.0.0:{_free_port()}", "--no-plots", "-q"],
                       capture_output=True, text=True, env=env(), cwd=REPO, timeout=120)
    assert r.returncode == 2, r.stderr
    assert "need CurveZMQ keys (--keys DIR" in r.stderr and "reachable from the network" in r.stderr


def test_a_wildcard_bind_warns_once_and_shorthands_are_refused(tmp_path, caplog, reference):
    keys = tmp_path / "keys"
    generate_keys(keys, workers=2)
    port = _free_port()
    for spelling in (f"tcp://*:{port}", f"tcp://0:{port}"):
        with pytest.raises(DistributedError, match=r"refusing to bind .*tcp://0\.0\.0\.0:PORT"):
            run_distributed(RING, CFG, PARTITION, options=DistOptions(bind=spelling, keys_dir=keys))
    with caplog.at_level(logging.WARNING, logger="cosim.distributed"):
        for _ in range(2):
            r = run_distributed(RING, CFG, PARTITION, options=DistOptions(
                bind=f"tcp://0.0.0.0:{port}", keys_dir=keys, launch=True))
            assert comparable(r) == reference
    warned = [rec.getMessage() for rec in caplog.records if "reachable from the network" in rec.getMessage()]
    assert len(warned) == 1 and f"tcp://0.0.0.0:{port}" in warned[0] and "authorized/" in warned[0]


# ----- temporary folders after kill -9 ---------------------------------------------------------------
def _stale_dirs(base: Path) -> list[Path]:
    return sorted(p for p in base.iterdir() if p.name.startswith("tlm-cosim-"))


def test_the_next_run_reaps_a_killed_coordinators_folder(tmp_path):
    """kill -9 leaves the coordinator's folder (ipc socket, worker logs); the next split run
    (`cosim run --processes 2`) removes it, and its own."""
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    tenv = {**env(), "TMPDIR": str(tmp)}
    proc = subprocess.Popen([sys.executable, "-m", "cosim.distributed.coordinator", "--builder",
                             "support.dist_platforms:compute_pair", "--config",
                             '{"rounds": 100000, "work": 2}', "--partition", "node0|node1"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=tenv,
                            cwd=REPO)
    try:
        end = time.monotonic() + 60
        line = ""
        while not line.startswith("workers:") and time.monotonic() < end:
            line = proc.stderr.readline()
            if not line and proc.poll() is not None:
                break
        assert line.startswith("workers:"), proc.stderr.read()
        left = _stale_dirs(tmp)
        assert len(left) == 1 and (left[0] / "owner.pid").exists() and (left[0] / "c.sock").exists()
        proc.kill()
        proc.wait(timeout=10)
    finally:
        proc.kill()
        proc.wait()
    assert _stale_dirs(tmp) == left                 # nobody could clean up
    r = subprocess.run([sys.executable, "-m", "cosim.cli", "run", "quickstart", "--processes", "2",
                        "--out", str(tmp_path / "out"), "--no-plots", "-q"],
                       capture_output=True, text=True, env=tenv, cwd=REPO, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert _stale_dirs(tmp) == []


def test_rtl_folders_of_a_killed_process_are_reaped_and_live_ones_kept(tmp_path):
    from cosim.proc.tmpdir import private_dir, reap_stale
    child = subprocess.Popen([sys.executable, "-c", "import sys, time\n"
                              "from cosim.proc.tmpdir import private_dir\n"
                              f"print(private_dir('tlm-cosim-rtl-', {str(tmp_path)!r}), flush=True)\n"
                              "time.sleep(120)"], stdout=subprocess.PIPE, text=True, env=env(), cwd=REPO)
    try:
        dead = Path(child.stdout.readline().strip())
        assert dead.is_dir()
        child.kill()
        child.wait(timeout=10)
    finally:
        child.kill()
        child.wait()
    mine = private_dir("tlm-cosim-rtl-", tmp_path)      # this process lives: kept
    unknown = tmp_path / "tlm-cosim-being-made"         # no owner file yet: kept
    unknown.mkdir()
    other = tmp_path / "unrelated"
    other.mkdir()
    assert not dead.exists()                           # private_dir reaped it first
    assert reap_stale(tmp_path) == []
    assert mine.is_dir() and unknown.is_dir() and other.is_dir()
