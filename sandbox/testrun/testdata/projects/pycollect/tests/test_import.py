import no_such_module


def test_uses_module():
    assert no_such_module
