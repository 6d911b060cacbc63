def test_fooBenchmark():
    pass
