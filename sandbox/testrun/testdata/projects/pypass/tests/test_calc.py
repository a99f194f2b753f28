import calc


def test_add():
    assert calc.add(1, 2) == 3


def test_add_negative():
    assert calc.add(-1, -2) == -3
