from hookgate.model.verdicts import Allow, AnyVerdict, Ask, Block, Context, Modify, Retry, combine

import msgspec
import pytest


def test_no_verdicts_is_allow():
    assert combine([]) == Allow()


def test_block_wins_and_merges_reasons_in_gate_order_without_duplicates():
    verdict = combine([Allow(), Block(reason="b1"), Modify(updated_input={"a": 1}), Block(reason="b2"), Block(reason="b1")])
    assert verdict == Block(reason="b1\nb2")


def test_context_and_messages_survive_whatever_wins():
    verdict = combine([Context(context="c1", message="m1"), Block(reason="r", context="c2"), Allow(message="m2")])
    assert verdict == Block(reason="r", context="c1\nc2", message="m1\nm2")


def test_precedence_table():
    assert combine([Ask(reason="a"), Retry(reason="r")]).kind == "retry"
    assert combine([Modify(updated_input={}), Ask(reason="a")]).kind == "ask"
    assert combine([Context(context="c"), Modify(updated_input={"x": 1})]) == Modify(updated_input={"x": 1}, context="c")
    assert combine([Allow(), Context(context="c")]) == Context(context="c")


def test_retry_keeps_the_longest_delay():
    assert combine([Retry(reason="a", delay_ms=10), Retry(reason="b", delay_ms=500)]) == Retry(reason="a\nb", delay_ms=500)


def test_last_modify_wins():
    assert combine([Modify(updated_input={"v": 1}), Modify(updated_input={"v": 2})]).updated_input == {"v": 2}


def test_verdicts_round_trip_as_a_tagged_union():
    for verdict in (Allow(), Block(reason="x", message="m"), Retry(reason="r", delay_ms=5), Modify(updated_input={"a": [1]})):
        assert msgspec.json.decode(msgspec.json.encode(verdict), type=AnyVerdict) == verdict


TEXTS = (None, "", "x")


@pytest.mark.parametrize("verdict", [
    *(Allow(message=message, context=context) for message in TEXTS for context in TEXTS),
    *(kind(reason=reason, message=message, context=context) for kind in (Retry, Block, Ask)
      for reason in ("", "r") for message in TEXTS for context in TEXTS),
    *(Context(context=context, message=message) for context in ("", "c") for message in TEXTS),
    *(Modify(updated_input={"a": 1}, message=message, context=context) for message in TEXTS for context in TEXTS),
], ids=repr)
def test_one_verdict_alone_folds_as_it_does_among_others(verdict):
    """combine() hands one verdict back as it is when that is its fold: the same answer as the
    fold of it beside an allow that says nothing (empty texts become None, an allow's context
    a Context)."""
    assert combine([verdict]) == combine([verdict, Allow()])
