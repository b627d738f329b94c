"""The lock primitive: exclusive across threads and processes, bounded wait."""

import multiprocessing
import os
import threading
import time

import pytest

from abcd_daemon.errors import LockContention, StorePathError
from abcd_daemon.fsio.locks import file_lock


def test_second_holder_waits_then_gives_up_within_budget(tmp_path):
    path = tmp_path / "l.lock"
    with file_lock(path, 1):
        t0 = time.monotonic()
        with pytest.raises(LockContention):
            with file_lock(path, 0.2):
                pass
        assert time.monotonic() - t0 < 1.5


def test_threads_exclude_each_other(tmp_path):
    path = tmp_path / "l.lock"
    inside = []
    overlap = []

    def work():
        with file_lock(path, 10):
            inside.append(1)
            if len(inside) > 1:
                overlap.append(1)
            time.sleep(0.01)
            inside.pop()

    threads = [threading.Thread(target=work) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not overlap


def _hold(path, ready, release):
    with file_lock(path, 5):
        ready.set()
        release.wait(10)


def test_another_process_holding_the_lock_blocks_us(tmp_path):
    path = tmp_path / "l.lock"
    ctx = multiprocessing.get_context("fork")
    ready, release = ctx.Event(), ctx.Event()
    proc = ctx.Process(target=_hold, args=(str(path), ready, release))
    proc.start()
    try:
        assert ready.wait(10)
        with pytest.raises(LockContention):
            with file_lock(path, 0.1):
                pass
    finally:
        release.set()
        proc.join(10)
    with file_lock(path, 1):
        pass


def test_a_symlinked_lock_path_is_refused(tmp_path):
    target = tmp_path / "target"
    target.write_text("")
    link = tmp_path / "l.lock"
    link.symlink_to(target)
    with pytest.raises(StorePathError):
        with file_lock(link, 0.1):
            pass


def test_a_waiter_on_an_unlinked_lock_waits_for_the_newcomer(tmp_path):
    path = tmp_path / "l.lock"
    order = []
    with file_lock(path, 5) as held:
        def waiter():
            with file_lock(path, 5):
                order.append("waiter")

        t = threading.Thread(target=waiter)
        t.start()
        time.sleep(0.05)
        os.unlink(held.path)  # the lock file is removed while held
    t.join(5)
    assert order == ["waiter"]
    assert os.path.exists(path)
