'''A docstring that mentions code:
def test_in_docstring():
    pass
'''


def test_shadowed():
    pass


# Rebinding the name hides the function from pytest (and from Python).
test_shadowed = None


def test_kept():
    pass
