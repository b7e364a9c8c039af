"""One trace reader for serve and advise: the same file means the same arrivals."""

import pytest

from trtcheck.errors import InputError


@pytest.mark.parametrize("text", ["0.5\n0.1\n0.3\n", "0.5, a\n0.1 b\n# c\n0.3\n", "[0.5, 0.1, 0.3]"])
def test_serve_and_advise_read_the_same_arrivals(tmp_path, text):
    from trtcheck.analyze.advice.simulator import read_trace as advise_read
    from trtcheck.measure.serving.loadgen import read_trace as serve_read

    f = tmp_path / "t.txt"
    f.write_text(text)
    assert serve_read(str(f)) == pytest.approx([0.0, 0.2, 0.4])
    assert advise_read(f).tolist() == pytest.approx([0.0, 0.2, 0.4])


def test_serve_allows_one_arrival_advise_needs_a_rate(tmp_path):
    from trtcheck.analyze.advice.simulator import read_trace as advise_read
    from trtcheck.measure.serving.loadgen import read_trace as serve_read

    f = tmp_path / "t.txt"
    f.write_text("3.0\n")
    assert serve_read(str(f)) == [0.0]
    with pytest.raises(InputError, match="at least 2"):
        advise_read(f)
    f.write_text("1\nnan\n")
    with pytest.raises(InputError, match="non-finite"):
        serve_read(str(f))
