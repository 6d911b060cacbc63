import zlb_fake_module_that_does_not_exist  # noqa: F401  (pytest reports an error)


def test_broken():
    pass
