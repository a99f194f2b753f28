import pytest

import calc


def test_add_ok():
    assert calc.add(2, 0) == 2


def test_add():
    assert calc.add(1, 2) == 3


@pytest.mark.parametrize("a,b,want", [(1, 1, 2), (2, 0, 2), (0, 0, 0)])
def test_add_param(a, b, want):
    assert calc.add(a, b) == want


def test_divide_by_zero():
    assert calc.divide(1, 0) == 0


def test_parse_helper():
    value = calc.parse("x")
    assert value == 1


@pytest.mark.skip(reason="not ready")
def test_skipped():
    pass


def test_with_broken_fixture(broken):
    assert broken


def test_message():
    items = [1, 2, 3]
    assert 4 in items, "four should be in items"


class TestStrings:
    def test_upper(self):
        assert "abc".upper() == "ABD"
