"""Reading user files safely: one clear error line for every way a JSON document fails."""

from __future__ import annotations

import pytest

from trtcheck.errors import InputError
from trtcheck.safe_io import parse_json_text


@pytest.mark.parametrize("text", ['{"a": "unterminated', '{"a": 1,}', '{"a" 1}'])
def test_json_error_names_line_and_column_once(text):
    with pytest.raises(InputError) as err:
        parse_json_text(text, "results.json", "pass a results file")
    msg = str(err.value)
    assert "at at" not in msg
    assert "at line 1, column " in msg and msg.startswith("results.json is not JSON (")


def test_unterminated_string_reads_as_one_phrase():
    with pytest.raises(InputError) as err:
        parse_json_text('{\n"a": 1,\n"b": "oops', "results.json", None)
    assert "(Unterminated string starting at line 3, column 6)" in str(err.value)
