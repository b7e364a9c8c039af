"""URLs trtcheck prints or builds from a model name quote it: a name holding ``/`` or
``..`` cannot point a hint (or a request) at another path of the server."""

from __future__ import annotations

from trtcheck.measure.serving.live.kserve import KServeClient, _model_path, parse_url


def test_the_not_loaded_hint_quotes_the_model_name():
    c = KServeClient(parse_url("http://127.0.0.1:8000"))
    err = c._not_loaded("../../x", "", {"name": "../../x", "state": "UNAVAILABLE",
                                        "reason": "unloaded"}, "not found")
    assert "/v2/repository/models/..%2F..%2Fx/load" in err.hint
    assert "/models/../../x/load" not in err.hint
    g = KServeClient(parse_url("grpc://127.0.0.1:8001"))
    err = g._not_loaded("a b/c", "", {"name": "a b/c"}, "not found")
    assert "/v2/repository/models/a%20b%2Fc/load" in err.hint


def test_endpoints_named_in_errors_quote_name_and_version():
    assert _model_path("m", "") == "/v2/models/m"
    assert _model_path("../m", "1/../2") == "/v2/models/..%2Fm/versions/1%2F..%2F2"
