"""What a piece of work costs this process: the peak of its resident memory above what it
held before, and the CPU time it took (every thread's).

The peak is the kernel's own high-water mark (``VmHWM``), reset before the work by writing
``5`` to ``/proc/self/clear_refs`` (Linux 4.0 and later), so it counts what Python's
allocator, the C libraries (protobuf, zlib, the database driver) and the buffers held, not
only Python objects as ``tracemalloc`` would.

    with measured() as cost:
        work()
    assert cost.megabytes < 300 and cost.cpu_seconds < 10, cost
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

# The costs each hostile input is held to (docs/operations.md#limits-on-hostile-input).
MAX_MEGABYTES = 300
MAX_CPU_SECONDS = 10


@dataclass
class Cost:
    megabytes: float = 0.0  # the peak resident memory above the start, in MiB
    cpu_seconds: float = 0.0

    def __str__(self) -> str:
        return f"{self.megabytes:,.0f} MB peak, {self.cpu_seconds:.2f} s of CPU"

    @property
    def within_limits(self) -> bool:
        return self.megabytes < MAX_MEGABYTES and self.cpu_seconds < MAX_CPU_SECONDS


def _status_kib(field: str) -> int:
    with open("/proc/self/status") as status:
        return int(re.search(rf"^{field}:\s+(\d+) kB", status.read(), re.M).group(1))


@contextmanager
def measured() -> Iterator[Cost]:
    """The cost of the block, filled in when it ends."""
    with open("/proc/self/clear_refs", "w") as clear:
        clear.write("5")  # the high-water mark starts again from what is resident now
    start_kib = _status_kib("VmRSS")
    start_cpu = time.process_time()
    cost = Cost()
    try:
        yield cost
    finally:
        cost.cpu_seconds = time.process_time() - start_cpu
        cost.megabytes = max(0, _status_kib("VmHWM") - start_kib) / 1024
