def test_model_not_an_operator():
    pass
