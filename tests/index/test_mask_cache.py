"""The filter mask cache of an index's columns, shared by every search thread."""

from __future__ import annotations

import sys
import threading
from types import FrameType

from trilha.index.columns import MetaColumns
from trilha.index.filter_input import coerce_filters


def test_a_mask_evicted_by_another_thread_while_found_is_still_returned() -> None:
    """A search finds its filter's mask in the cache (of two); before it marks the mask as
    the most recent, another search's filters evict it: the first still gets its mask."""
    columns = MetaColumns([{"tags": [f"t{i % 3}"]} for i in range(30)], cache_size=2)
    first, *others = [coerce_filters({"tags": [f"t{i}"]}) for i in range(3)]
    expected = columns.mask(first)
    others_done = threading.Event()

    def other_search() -> None:
        for expr in others:
            columns.mask(expr)
        others_done.set()

    def between(frame: FrameType, event: str, arg: object) -> None:
        """Right after the cache's lookup returns, the other search runs (for up to 0.5 s:
        where the cache is locked, it waits for this one instead)."""
        if event == "c_return" and getattr(arg, "__name__", "") == "get":
            sys.setprofile(None)
            threading.Thread(target=other_search).start()
            others_done.wait(0.5)

    sys.setprofile(between)
    try:
        found = columns.mask(first)
    finally:
        sys.setprofile(None)
    assert others_done.wait(5)
    assert found is not None and expected is not None and (found == expected).all()
