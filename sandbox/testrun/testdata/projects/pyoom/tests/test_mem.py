def test_small():
    assert sum(range(10)) == 45


def test_huge_allocation():
    data = b"x" * (4 * 1024 * 1024 * 1024)
    assert len(data) > 0
