def test_perf_chunk():
    pass
