"""Guarded read refuses whatever is not a plain regular file within its cap, whole."""

import os
import socket
import threading

import pytest

from abcd_daemon.errors import ReadRefused
from abcd_daemon.fsio.guarded import read_guarded


def test_reads_a_regular_file_whole(tmp_path):
    p = tmp_path / "t.jsonl"
    p.write_bytes(b"x" * 5000)
    assert read_guarded(p, 5000) == b"x" * 5000


def test_symlinked_leaf_is_refused_not_followed(tmp_path):
    target = tmp_path / "secret"
    target.write_text("do not read")
    link = tmp_path / "link.jsonl"
    link.symlink_to(target)
    with pytest.raises(ReadRefused) as err:
        read_guarded(link, 1 << 20, what="transcript")
    assert err.value.reason == "not-regular"
    assert "symlink" in str(err.value)


def test_fifo_with_no_writer_is_refused_without_blocking(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    done = []
    t = threading.Thread(target=lambda: done.append(pytest.raises(ReadRefused, read_guarded, fifo, 10)))
    t.start()
    t.join(5)
    assert done and done[0].value.reason == "not-regular"


@pytest.mark.parametrize("path", ["/dev/null", "/dev/zero"])
def test_device_is_refused(path):
    with pytest.raises(ReadRefused) as err:
        read_guarded(path, 10)
    assert err.value.reason == "not-regular"


def test_directory_is_refused(tmp_path):
    with pytest.raises(ReadRefused) as err:
        read_guarded(tmp_path, 10)
    assert err.value.reason == "not-regular"


def test_unix_socket_is_refused(tmp_path):
    path = tmp_path / "s"
    s = socket.socket(socket.AF_UNIX)
    s.bind(str(path))
    try:
        with pytest.raises(ReadRefused):
            read_guarded(path, 10)
    finally:
        s.close()


def test_over_cap_file_is_refused_whole_not_truncated(tmp_path):
    p = tmp_path / "big"
    p.write_bytes(b"a" * 101)
    with pytest.raises(ReadRefused) as err:
        read_guarded(p, 100)
    assert err.value.reason == "too-big"
    assert "100-byte cap" in str(err.value)


def test_sparse_file_over_cap_is_refused_without_reading_it(tmp_path):
    p = tmp_path / "sparse"
    with open(p, "wb") as f:
        f.truncate(10 << 30)  # 10 GiB of holes
    with pytest.raises(ReadRefused) as err:
        read_guarded(p, 64 << 20)
    assert err.value.reason == "too-big"


def test_empty_file_is_refused_when_asked(tmp_path):
    p = tmp_path / "empty"
    p.write_bytes(b"")
    assert read_guarded(p, 10) == b""
    with pytest.raises(ReadRefused) as err:
        read_guarded(p, 10, allow_empty=False)
    assert err.value.reason == "empty"


def test_missing_file_says_so(tmp_path):
    with pytest.raises(ReadRefused) as err:
        read_guarded(tmp_path / "nope", 10)
    assert err.value.reason == "missing"


def test_head_reads_only_a_prefix_but_still_checks_the_cap(tmp_path):
    p = tmp_path / "f"
    p.write_bytes(b"0123456789")
    assert read_guarded(p, 100, head=4) == b"0123"
    with pytest.raises(ReadRefused):
        read_guarded(p, 5, head=4)
