"""``abcd view`` and ``abcd history reconstruct --format html`` from the command line,
and the viewer reading through the daemon when one runs."""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys

from abcd_daemon.paths import Home
from abcd_daemon.store.lane import Lane

from ..conftest import make_repo
from ..daemon.procs import DaemonProc, env_for
from ..reconstruct.real import store_session
from ..web.support import REAL_MAIN, REAL_SESSION, get


def _stored(tmp_path):
    env = env_for(tmp_path)
    repo = tmp_path / "repo"
    sha = make_repo(repo)
    home = Home(tmp_path / "home")
    home.root.mkdir(mode=0o700, exist_ok=True)
    store_session(Lane(home, sha), REAL_MAIN)
    return env, repo, sha, home


def test_abcd_view_prints_a_tokened_loopback_url_serves_the_sessions_and_stops_on_ctrl_c(tmp_path):
    env, repo, sha, _ = _stored(tmp_path)
    env["ABCD_LOCAL"] = "1"
    proc = subprocess.Popen([sys.executable, "-m", "abcd_client", "view", "--no-open", "--json"],
                            env=env, cwd=repo, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        ready = json.loads(proc.stdout.readline())
        url, port = ready["url"], ready["port"]
        assert url.startswith(f"http://127.0.0.1:{port}/?token=") and len(url.split("=")[1]) >= 40
        status, _, body = get(url.replace("/?", f"/r/{sha}?"))
        assert status == 200 and REAL_SESSION[:8].encode() in body
        assert get(f"http://127.0.0.1:{port}/r/{sha}")[0] == 403
    finally:
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err.decode()
    assert ready["url"].split("=")[1].encode() not in err  # the token is in no log line


def test_abcd_view_refuses_a_port_it_cannot_bind(tmp_path):
    import socket

    env, repo, _, _ = _stored(tmp_path)
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen()
    try:
        res = subprocess.run([sys.executable, "-m", "abcd_client", "view", "--no-open", "--port",
                              str(taken.getsockname()[1])], env=env, cwd=repo,
                             capture_output=True, text=True, timeout=60)
    finally:
        taken.close()
    assert res.returncode == 2 and "cannot listen on 127.0.0.1" in res.stderr


def test_reconstruct_format_html_writes_one_owner_only_self_contained_page(tmp_path, cli):
    env, repo, _, _ = _stored(tmp_path)
    env["ABCD_LOCAL"] = "1"
    out = tmp_path / "out"
    out.mkdir()
    code, stdout, stderr = cli("history", "reconstruct", REAL_SESSION[:8], "--format", "html",
                               "--out", str(out), "--json", cwd=repo, env=env)
    assert code == 0, stderr
    written = json.loads(stdout)["written"]
    assert [os.path.basename(p) for p in written] == [f"{REAL_SESSION}.html"]
    page = (out / f"{REAL_SESSION}.html").read_text()
    assert stat.S_IMODE((out / f"{REAL_SESSION}.html").stat().st_mode) == 0o600
    assert 'class="timeline"' in page and "<style>" in page and "<script" not in page
    assert sorted(os.listdir(out)) == [f"{REAL_SESSION}.html"]
    code, _, stderr = cli("history", "reconstruct", REAL_SESSION[:8], "--format", "pdf",
                          "--out", str(out), cwd=repo, env=env)
    assert code == 2 and "--format" in stderr


def test_the_viewer_reads_records_and_reconstructions_from_a_running_daemon(tmp_path, monkeypatch):
    from abcd_client.view_source import DaemonSource
    from abcd_daemon.web.source import LocalSource

    env, repo, sha, home = _stored(tmp_path)
    daemon = DaemonProc(env, tmp_path / "d.log").wait_ready()
    try:
        for key in ("ABCD_HOME", "ABCD_SOCKET", "TMPDIR"):
            monkeypatch.setenv(key, env[key])
        monkeypatch.delenv("ABCD_LOCAL", raising=False)
        local = LocalSource(home).reconstruction(sha, REAL_SESSION)

        def refuse(*args):
            raise AssertionError("read in-process although a daemon answers")

        monkeypatch.setattr(LocalSource, "reconstruction", refuse)
        monkeypatch.setattr(LocalSource, "records", refuse)
        source = DaemonSource(home)
        served = source.reconstruction(sha, REAL_SESSION)
        assert served.artefact == local.artefact
        assert [r.session_id for r in source.session_records(sha, REAL_SESSION)] == [REAL_SESSION] * 7
    finally:
        assert daemon.stop() == 0


def test_the_viewers_list_usage_and_search_are_the_daemons_answers_equal_to_in_process(tmp_path, monkeypatch):
    from abcd_client.view_source import DaemonSource
    from abcd_daemon.web.source import LocalSource

    from ..web.support import store_many

    env, repo, sha, home = _stored(tmp_path)
    store_many(home, 130, sha)
    local = LocalSource(home)
    want = ([local.session_page(sha, k, 100) for k in (0, 100)],
            local.usage("agent", sha, session=REAL_SESSION), local.search("parallel", sha),
            local.repositories())
    daemon = DaemonProc(env, tmp_path / "d.log").wait_ready()
    try:
        for key in ("ABCD_HOME", "ABCD_SOCKET", "TMPDIR"):
            monkeypatch.setenv(key, env[key])
        monkeypatch.delenv("ABCD_LOCAL", raising=False)

        def refuse(*args):
            raise AssertionError("read the index in-process although a daemon answers")

        monkeypatch.setattr(LocalSource, "keeper", refuse)
        source = DaemonSource(home)
        pages = [source.session_page(sha, k, 100) for k in (0, 100)]
        assert [p.total for p in pages] == [131, 131] and [len(p.sessions) for p in pages] == [100, 31]
        assert (pages, source.usage("agent", sha, session=REAL_SESSION),
                source.search("parallel", sha), source.repositories()) == want
        assert want[2] and len(want[1].rows) >= 2 and [r.sessions for r in want[3]] == [131]
    finally:
        assert daemon.stop() == 0
