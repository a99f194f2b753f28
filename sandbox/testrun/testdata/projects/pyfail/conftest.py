import pytest


@pytest.fixture
def broken():
    raise RuntimeError("fixture exploded")
