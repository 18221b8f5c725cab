import re

import pytest

from hookgate.engine.matcher import compile_matcher


@pytest.mark.parametrize("pattern", ["", "*", None])
def test_empty_and_star_match_everything(pattern):
    assert compile_matcher(pattern)("Anything") and compile_matcher(pattern)(None)


def test_word_characters_and_bars_are_an_exact_list():
    match = compile_matcher("Write|Edit")
    assert match("Write") and match("Edit")
    assert not match("WriteFile") and not match("MultiEdit") and not match("write")


def test_anything_else_is_an_unanchored_regex():
    assert compile_matcher("^Notebook")("NotebookEdit")
    assert compile_matcher("mcp__.*__write")("mcp__fs__write_file")
    assert not compile_matcher("^Notebook")("MyNotebook")


def test_invalid_regex_raises():
    with pytest.raises(re.error):
        compile_matcher("(unclosed")
