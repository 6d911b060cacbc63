"""triton.compiler of the stub: ASTSource and LazyDict in Triton 3.6's layout.

ASTSource(fn, signature, constexprs, attrs):
  fn         the JITFunction (fn.__name__, fn.arg_names, fn.constexprs)
  signature  {arg name: type}, "constexpr" for compile-time arguments (declared
             tl.constexpr, an int specialised as equal to 1, None)
  constants  {(arg index,): value} for every "constexpr" argument
  attrs      {(arg index,): [["tt.divisibility", 16]]} for specialised arguments

LazyDict is what launch_enter_hook receives: .data holds name, function (the
loaded kernel's handle) and stream -- no hash, as in Triton 3.6.
LAUNCH_DATA_HASH = True adds "hash" to it (some builds carry it).
"""

LAUNCH_DATA_HASH = False


class ASTSource:
    def __init__(self, fn, signature, constexprs=None, attrs=None):
        self.fn = fn
        self.language = "triton"
        self.ext = "ttir"
        self.name = fn.__name__
        self.signature = dict(signature)
        self.constants = dict(constexprs or {})
        self.attrs = dict(attrs or {})

    def __repr__(self):
        return "ASTSource(%s)" % self.name


class LazyDict:
    def __init__(self, data):
        self.data = data
        self.extras = []

    def get(self):
        for func, args in self.extras:
            self.data = self.data | func(*args)
        self.extras.clear()
        return self.data

    def add(self, func, args):
        self.extras.append((func, args))
