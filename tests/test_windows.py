"""The pure window loop (cosim.distributed.windows) and the process supervisor (cosim.proc):
no sockets needed for the first, real child processes for the second."""
from __future__ import annotations

import sys
import time

from cosim.distributed.windows import WindowLoop
from cosim.proc import supervisor


def test_window_grants_only_workers_with_work_before_the_end():
    loop = WindowLoop(3, lookahead=10, max_time=None)
    loop.peers[0].next_time, loop.peers[1].next_time, loop.peers[2].next_time = 5, 14, 40
    win = loop.next_window()
    assert (win.number, win.start, win.end) == (0, 5, 15)
    assert [g.index for g in win.grants] == [0, 1]
    # worker 0 sends worker 2 an event due at 17; worker 1 goes quiet
    loop.report(0, None, 9, [[2, 17, 1, 0]], [b"blob"])
    loop.report(1, None, 14, [], [])
    loop.close(win)
    assert loop.safe_time == 15 and loop.events_routed == 1
    win = loop.next_window()
    assert (win.start, win.end) == (17, 27)
    assert [(g.index, g.counts, g.frames) for g in win.grants] == [(2, [0], [b"blob"])]
    loop.report(2, 40, 17, [], [])     # ran the delivered event; its own is still at 40
    loop.close(win)
    win = loop.next_window()
    assert (win.start, win.end) == (40, 50)
    loop.report(2, None, 40, [], [])
    loop.close(win)
    assert loop.next_window() is None and not loop.pending()
    assert loop.end_time(False) == 40 and loop.windows == 3


def test_no_lookahead_means_one_window_to_the_end_or_the_limit():
    loop = WindowLoop(2, lookahead=None, max_time=None)
    loop.peers[0].next_time = 0
    win = loop.next_window()
    assert win.end is None and [g.index for g in win.grants] == [0]
    loop = WindowLoop(1, lookahead=None, max_time=100)
    loop.peers[0].next_time = 0
    assert loop.next_window().end == 100
    loop.report(0, 150, 90, [], [])
    assert loop.next_window() is None and loop.pending() and loop.end_time(True) == 100


def test_supervisor_kills_the_group_and_describes_the_end(tmp_path):
    log = tmp_path / "child.log"
    proc = supervisor.spawn([sys.executable, "-c", "import time; print('up', flush=True); "
                             "time.sleep(60)"], log_path=log)
    end = time.monotonic() + 10
    while "up" not in supervisor.log_tail(log) and time.monotonic() < end:
        time.sleep(0.02)
    assert supervisor.log_tail(log) == "up"
    assert supervisor.reap([proc], grace=0.1) == []
    assert proc.returncode == -9 and supervisor.exit_description(proc.returncode) == "was killed by signal 9"
    done = supervisor.spawn([sys.executable, "-c", "raise SystemExit(3)"])
    done.wait(timeout=30)
    supervisor.kill_group(done)           # already ended: only reaps
    assert supervisor.exit_description(done.returncode) == "exited with code 3"
