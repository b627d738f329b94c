"""The token, the Host check and read-only: every request is judged before it runs."""

from __future__ import annotations

from abcd_daemon.web.auth import cookie_name, decide, new_token

TOKEN = "t0k3n-abc"
PORT = 8123


def judge(**kw):
    args = dict(method="GET", host=f"127.0.0.1:{PORT}", query=f"token={TOKEN}", cookie="",
                token=TOKEN, port=PORT)
    args.update(kw)
    return decide(**args)


def test_the_launch_token_in_the_query_is_let_in_and_a_cookie_is_set():
    verdict = judge()
    assert verdict.status == 0 and verdict.set_cookie


def test_the_cookie_alone_is_enough_and_is_not_set_again():
    verdict = judge(query="", cookie=f"other=1; {cookie_name(PORT)}={TOKEN}")
    assert verdict.status == 0 and not verdict.set_cookie


def test_no_token_a_wrong_one_or_another_ports_cookie_is_403():
    assert judge(query="").status == 403
    assert judge(query="token=nope").status == 403
    assert judge(query="", cookie=f"{cookie_name(PORT + 1)}={TOKEN}").status == 403


def test_a_host_that_is_not_this_loopback_address_and_port_is_403_even_with_the_token():
    for host in ("evil.example:8123", f"127.0.0.1:{PORT + 1}", "127.0.0.1", "", f"[::1]:{PORT}",
                 f"localhost.evil.example:{PORT}"):
        assert judge(host=host).status == 403, host
    assert judge(host=f"localhost:{PORT}").status == 0
    assert judge(host=f"LocalHost:{PORT}").status == 0  # a host name is case-insensitive


def test_only_reading_verbs_exist():
    assert judge(method="HEAD").status == 0
    for method in ("POST", "PUT", "DELETE", "PATCH"):
        assert judge(method=method).status == 405


def test_each_launch_draws_a_new_long_token():
    a, b = new_token(), new_token()
    assert a != b and len(a) >= 40
