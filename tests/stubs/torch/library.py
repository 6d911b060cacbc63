"""torch.library of the stub: Library objects that register nothing."""


class Library:
    def __init__(self, ns, kind, dispatch_key=""):
        self.ns = ns
        self.kind = kind

    def impl(self, *args, **kwargs):
        pass

    def _destroy(self):
        pass
