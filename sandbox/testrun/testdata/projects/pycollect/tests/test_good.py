def test_good():
    assert True
