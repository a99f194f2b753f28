import sys

import pytest

from shapepkg import clamp


def test_inside():
    assert clamp(5, 0, 10) == 5


@pytest.mark.parametrize("x,want", [(-1, 0), (11, 10)])
def test_outside(x, want):
    assert clamp(x, 0, 10) == want


@pytest.mark.skipif(sys.version_info < (4,), reason="documented skip")
def test_future():
    assert False
