"""A pool of endpoints: which endpoint each attempt goes to, which URLs make a pool, and what each did."""

from __future__ import annotations

import pytest

from rag_compare.core.errors import ConfigError
from rag_compare.llm.pool import SET_ASIDE_AFTER, EndpointUsage, Router, base_urls, pool_names, usage_lines, usage_of


def test_an_attempt_goes_to_the_endpoint_with_the_fewest_in_flight_ties_in_the_pools_order() -> None:
    router = Router(["a", "b", "c"])
    assert [router.take({}) for _ in range(4)] == ["a", "b", "c", "a"]  # in flight then: a 2, b 1, c 1
    router.release("c", failed=False)
    assert router.take({}) == "c"
    router.release("a", failed=False)
    router.release("a", failed=False)
    assert router.take({}) == "a"
    assert router.in_flight == {"a": 1, "b": 1, "c": 1}


def test_a_retry_goes_where_the_request_failed_least_even_when_it_is_busier() -> None:
    router = Router(["a", "b", "c"])
    router.take({})
    router.take({})  # a 1, b 1, c 0 in flight
    assert router.take({"c": 1}) == "a"  # c is idle, but this request already failed there
    everywhere = {"a": 1, "b": 1, "c": 1}
    assert router.take(everywhere) == "c"  # failed once on each: the fewest in flight (a 2, b 1, c 0)
    assert router.take(everywhere) == "b"  # a 2, b 1, c 1: the first of b and c
    assert router.take({"a": 1, "b": 2, "c": 2}) == "a"  # the busiest (2), but failed there least


def test_an_endpoint_failing_in_a_row_is_set_aside_until_it_answers_again() -> None:
    router = Router(["a", "b"])
    for _ in range(SET_ASIDE_AFTER - 1):
        router.take({})
        router.release("a", failed=True)
    assert router.take({}) == "a"  # two failures in a row: still first in the pool
    router.release("a", failed=True)
    assert router.set_aside("a")
    for _ in range(3):
        assert router.take({}) == "b"  # even with b busier
    assert router.another_to_try({})
    assert not router.another_to_try({"b": 1})  # only b is left, and this request failed there
    for _ in range(3):
        router.release("b", failed=True)
    assert router.set_aside("b")
    assert router.take({"b": 1}) == "a"  # every endpoint set aside: where the request failed least
    router.release("a", failed=False)
    assert not router.set_aside("a")
    assert router.take({}) == "a"


def test_a_pool_is_each_endpoint_once_in_the_order_given() -> None:
    assert base_urls(None) == (None,)
    assert base_urls("http://a/v1") == ("http://a/v1",)
    urls = ["http://b/v1", "http://a/v1", "http://b/v1/", "http://user:pw@a/v1"]
    assert base_urls(urls) == ("http://b/v1", "http://a/v1")  # the same endpoint names are one endpoint
    assert pool_names(None, urls) == ("http://b/v1", "http://a/v1")
    assert pool_names(None, ["http://user:pw@a/v1/"]) == ("http://a/v1",)


@pytest.mark.parametrize(
    ("pool", "got"), [([], "none"), (["http://a/v1", " "], "a blank one"), ([b"http://a"], "bytes")]
)
def test_an_unusable_pool_is_refused(pool: list[str], got: str) -> None:
    with pytest.raises(ConfigError, match=rf"a pool of endpoints is one or more URLs, .*\(got {got}\)\.$"):
        base_urls(pool)


def test_a_client_replaces_one_url_but_not_a_pool() -> None:
    class Client:
        base_url = "http://c/v1/"

    assert pool_names(Client(), "http://ignored/v1") == ("http://c/v1",)
    with pytest.raises(ConfigError, match="`client` replaces `base_url`"):
        pool_names(Client(), ["http://a/v1", "http://b/v1"])


def test_usage_counts_every_attempt_and_the_last_one_of_an_answered_request() -> None:
    tried = [
        (("a",), True),  # a: sent 1, succeeded 1
        (("a", "b"), True),  # a failed, b answered
        (("b", "a", "b"), False),  # failed three times
        ((), True),  # from the cache: nothing sent
    ]
    usage = usage_of(["a", "b", "c"], tried)
    assert usage == {"a": EndpointUsage(3, 1), "b": EndpointUsage(3, 1), "c": EndpointUsage(0, 0)}
    assert (usage["a"].failed, usage["b"] + usage["a"]) == (2, EndpointUsage(6, 2))
    assert usage_lines({"http://a/v1": EndpointUsage(1200, 1100)}) == [
        "endpoint http://a/v1: 1,200 requests sent, 1,100 succeeded, 100 failed"
    ]
