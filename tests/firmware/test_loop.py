"""The control loop: posting, timers with tokens, the fake clock, and handler errors."""

from __future__ import annotations

import signal
import sys
import threading
import time

import pytest

from firmware.loop import Event, FakeClock, Loop
from tests.wait import WAIT, wait_until


def make(clock=None, **kwargs):
    seen: list[Event] = []
    loop = Loop(seen.append, clock=clock or FakeClock(), **kwargs)
    return loop, seen


def test_posted_events_are_stamped_and_handled_in_order():
    clock = FakeClock(start_ns=5)
    loop, seen = make(clock)
    loop.post("a", n=1)
    clock.advance(2)
    loop.post("b", n=2)
    assert loop.run_pending() == 2
    assert [(e.kind, e.t_ns, e.data) for e in seen] == [
        ("a", 5, {"n": 1}),
        ("b", 2_000_005, {"n": 2}),
    ]


def test_an_event_posted_with_its_edge_time_keeps_it():
    # An input edge the kernel stamped: the event carries when the edge happened, not when the
    # callback got round to posting it.
    clock = FakeClock(start_ns=9_000_000)
    loop, seen = make(clock)
    loop.post("card", at_ns=8_400_000, edge=3)
    loop.run_pending()
    assert [(e.kind, e.t_ns, e.data) for e in seen] == [("card", 8_400_000, {"edge": 3})]


def test_timers_fire_at_their_deadline_not_before():
    clock = FakeClock()
    loop, seen = make(clock)
    loop.set_timer("t", 10, "tick", x=1)
    clock.advance(9.9)
    assert loop.run_pending() == 0
    clock.advance(0.1)
    assert loop.run_pending() == 1
    assert seen[0].kind == "tick" and seen[0].data == {"timer": "t", "x": 1}
    assert loop.timers() == {}


def test_rearming_a_timer_makes_the_old_deadline_stale():
    clock = FakeClock()
    loop, seen = make(clock)
    first = loop.set_timer("t", 5, "old")
    second = loop.set_timer("t", 20, "new")
    assert first != second
    clock.advance(6)
    assert loop.run_pending() == 0  # the old entry is dropped, not fired late
    clock.advance(14)
    loop.run_pending()
    assert [e.kind for e in seen] == ["new"]


def test_cancelled_timers_never_fire():
    clock = FakeClock()
    loop, seen = make(clock)
    loop.set_timer("a", 1, "a")
    loop.set_timer("b", 2, "b")
    loop.cancel_timer("a")
    loop.cancel_timer("missing")  # no error
    clock.advance(5)
    loop.run_pending()
    assert [e.kind for e in seen] == ["b"]


def test_timers_with_equal_deadlines_fire_in_arming_order():
    clock = FakeClock()
    loop, seen = make(clock)
    for name in "xyz":
        loop.set_timer(name, 3, name)
    clock.advance(3)
    loop.run_pending()
    assert [e.kind for e in seen] == ["x", "y", "z"]


def test_a_handler_error_goes_to_on_error_and_the_loop_goes_on():
    errors = []

    def handler(event):
        if event.kind == "bad":
            raise ValueError("boom")
        handled.append(event.kind)

    handled: list[str] = []
    loop = Loop(handler, clock=FakeClock(), on_error=lambda exc, ev: errors.append((exc, ev.kind)))
    loop.post("bad")
    loop.post("good")
    loop.run_pending()
    assert handled == ["good"]
    assert [(str(e), k) for e, k in errors] == [("boom", "bad")]
    assert loop.errors == 1


def test_on_error_failing_calls_on_crash_and_ends_the_thread():
    crashed = threading.Event()
    calls = []

    def on_error(exc, event):
        raise RuntimeError("safe shutdown failed")

    def on_crash(exc):
        calls.append(repr(exc))
        crashed.set()

    loop = Loop(lambda e: 1 / 0, on_error=on_error, on_crash=on_crash)
    loop.start()
    loop.post("x")
    assert crashed.wait(5)
    loop.stop()
    assert not loop.alive
    assert isinstance(loop.crashed, RuntimeError) and "safe shutdown failed" in calls[0]


def test_without_on_error_a_handler_error_propagates():
    loop = Loop(lambda e: 1 / 0, clock=FakeClock())
    loop.post("x")
    with pytest.raises(ZeroDivisionError):
        loop.run_pending()


def test_posts_from_many_threads_all_reach_the_loop_thread():
    seen = []
    done = threading.Event()
    loop_threads = set()

    def handler(event):
        loop_threads.add(threading.current_thread().name)
        seen.append(event.data["n"])
        if len(seen) == 400:
            done.set()

    loop = Loop(handler)
    loop.start()
    posters = [
        threading.Thread(target=lambda k=k: [loop.post("n", n=k * 100 + i) for i in range(100)])
        for k in range(4)
    ]
    for t in posters:
        t.start()
    for t in posters:
        t.join()
    assert done.wait(5)
    loop.stop()
    assert sorted(seen) == list(range(400))
    assert loop_threads == {"launcher-loop"}


def test_real_clock_timer_wakes_the_blocked_loop():
    fired = threading.Event()
    loop = Loop(lambda e: fired.set() if e.kind == "tick" else loop.set_timer("t", 5, "tick"))
    loop.start()
    loop.post("arm")
    assert fired.wait(5)
    loop.stop()
    assert not loop.alive


def test_timers_rearmed_or_cancelled_do_not_pile_up_in_the_heap():
    clock = FakeClock()
    loop = Loop(lambda e: None, clock=clock)
    for n in range(10_000):  # a max-on deadline of seconds re-armed by a burst every few ms
        loop.set_timer("max_on:ejector", 8000, "max_on")
        loop.cancel_timer("max_on:ejector")
        loop.set_timer(f"t{n % 3}", 500, "tick")
    assert len(loop._timers) < 100
    assert sorted(loop.timers()) == ["t0", "t1", "t2"]
    clock.advance(600)
    assert loop.run_pending() == 3


def _blocked_in_run(ident: int) -> bool:
    """Thread `ident` is inside `Loop.run`'s wait and stays there: the same instruction across
    a few looks, with this thread sleeping (and so not holding the GIL) between them."""
    seen = set()
    for _ in range(3):
        frame = sys._current_frames().get(ident)
        names, f = [], frame
        while f is not None:
            names.append(f.f_code.co_name)
            f = f.f_back
        if frame is None or "run" not in names:
            return False
        seen.add((frame.f_code, frame.f_lasti))
        time.sleep(0.005)
    return len(seen) == 1


@pytest.mark.skipif(not hasattr(signal, "pthread_kill"), reason="needs pthread_kill")
def test_a_wait_held_up_past_its_timer_still_ends_and_fires_the_timer():
    # The loop waits for events until its next timer. If that wait is held up past the deadline
    # inside the queue (a thread preempted on a busy or emulated CPU; here, at a chosen point, a
    # signal handler that returns only once the deadline has passed), it must still end.
    # CPython's SimpleQueue.get then waited for the next post instead: the box missed every
    # timer, max-on deadlines among them, until an edge or a command came (seen under qemu: a
    # burst in spinup for 30 s, its flywheel_ready and max-on timers long due).
    fired, rescued = threading.Event(), threading.Event()
    loop = Loop(lambda event: fired.set() if event.kind == "due" else None)
    deadline = loop.clock() + 50_000_000
    loop.set_deadline("t", deadline, "due")
    held = threading.Event()

    def held_up(signum: int, frame: object) -> None:
        while time.monotonic_ns() < deadline + 2_000_000:  # the deadline is past, by far
            time.sleep(0.001)
        held.set()

    def hold_the_wait() -> None:
        wait_until(lambda: _blocked_in_run(main), what="the loop to wait")
        signal.pthread_kill(main, signal.SIGUSR1)
        if held.wait(WAIT) and not fired.wait(WAIT):
            rescued.set()  # the old queue waited for a post: end the test (it fails below)
        loop.stop(timeout=0)

    main = threading.get_ident()
    previous = signal.signal(signal.SIGUSR1, held_up)
    helper = threading.Thread(target=hold_the_wait)
    try:
        helper.start()
        loop.run()  # on this thread: the signal's handler runs inside the queue's wait
    finally:
        helper.join()
        signal.signal(signal.SIGUSR1, previous)
    assert held.is_set(), "the wait was never held up"
    assert not rescued.is_set(), "the timer did not fire until an event came"
