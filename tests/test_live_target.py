"""The live target registry: --url parsed once into an endpoint, the protocol by scheme or
--protocol, the control plane and the load of each protocol found in the registry."""

from __future__ import annotations

import pytest

from tests.cli_helper import invoke
from trtcheck.errors import InputError
from trtcheck.measure.serving.live import (
    TARGETS,
    open_target,
    parse_endpoint,
    target_kind,
)
from trtcheck.measure.serving.live.kserve import Endpoint, KServeClient
from trtcheck.measure.serving.live.live import run_job


def test_kserve_is_registered_for_http_and_grpc():
    assert set(TARGETS) == {"http", "grpc"}
    for name, kind in TARGETS.items():
        assert kind.schemes == (name,)
        assert kind.resolve("control") is KServeClient
        assert kind.resolve("send") is run_job
        kind.resolve("check")  # importable
    assert isinstance(open_target(parse_endpoint("grpc://127.0.0.1:8001")), KServeClient)


def test_the_scheme_chooses_the_protocol():
    assert parse_endpoint("http://127.0.0.1:8000") == Endpoint(
        "http://127.0.0.1:8000", "http", "127.0.0.1:8000")
    assert parse_endpoint(" grpc://[::1]:8001/ ").address == "[::1]:8001"


def test_protocol_takes_a_bare_address_and_refuses_another_scheme():
    ep = parse_endpoint("127.0.0.1:8001", "grpc")
    assert (ep.protocol, ep.address, ep.url) == ("grpc", "127.0.0.1:8001", "127.0.0.1:8001")
    assert parse_endpoint("http://h:1", "http").protocol == "http"
    with pytest.raises(InputError, match="is a grpc:// URL; --protocol http"):
        parse_endpoint("grpc://h:1", "http")
    with pytest.raises(InputError, match="no live target speaks 'openai'"):
        target_kind("openai")


@pytest.mark.parametrize("bad", ["ftp://h:1", "localhost", "http://h", "http://h:1/v2"])
def test_bad_urls_keep_the_kserve_messages(bad):
    with pytest.raises(InputError):
        parse_endpoint(bad)


def test_serve_refuses_a_contradicting_protocol_before_any_work():
    res = invoke("serve", "--url", "grpc://127.0.0.1:1", "--protocol", "http", "--model", "m")
    assert res.returncode == 2
    assert res.stderr.strip().splitlines()[-1].startswith(
        "error: --url 'grpc://127.0.0.1:1' is a grpc:// URL; --protocol http")


def test_protocol_without_url_is_refused():
    res = invoke("serve", "--synthetic-curve", "1:1", "--protocol", "grpc")
    assert res.returncode == 2 and "--protocol applies to live targets only" in res.stderr


def test_serve_parses_the_url_once(monkeypatch):
    import trtcheck.measure.serving.live.target as target

    calls = []
    real = target.parse_endpoint

    def counting(url, protocol=None):
        calls.append(url)
        return real(url, protocol)

    monkeypatch.setattr("trtcheck.measure.serving.live.parse_endpoint", counting)
    res = invoke("serve", "--url", "http://127.0.0.1:1", "--model", "m", "--load", "closed:1",
                 "--duration-s", "0.1")
    assert res.returncode == 3, res.stderr  # nothing answers there
    assert calls == ["http://127.0.0.1:1"]
