"""What the device's caching allocator says of its memory: how much it has
reserved and how much the device has free. Read around captures, to size
the placements that fit (_graph_size.placements_for) and to tell which
probe graphs took new memory from the driver (placement_probe_pool_mib).
Kept apart from _graph, which captures and replays: these only read."""

from . import _device


def reserved_or_none(torch):
    """The allocator's reserved bytes; None where it cannot say."""
    try:
        return int(_device.module(torch).memory_reserved())
    except Exception:
        return None


def reserved(torch):
    """The allocator's reserved bytes; 0 where it cannot say."""
    got = reserved_or_none(torch)
    return 0 if got is None else got


def grew_mib(before, after):
    """after - before in MiB; None where either was not read."""
    return None if before is None or after is None else (after - before) / float(1 << 20)


def free_bytes(torch):
    """The device's free bytes; None where it cannot say."""
    try:
        return int(_device.module(torch).mem_get_info()[0])
    except Exception:
        return None
