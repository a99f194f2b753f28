import time


def test_passes():
    pass


def test_fails():
    assert 1 == 2


class TestGroup:
    def test_hangs(self):
        time.sleep(600)


def test_after():
    pass
