"""How busy the machine is: a timing taken while other processes use the cores is not a
figure to quote, so the benchmarks print how much of the machine others took."""

from __future__ import annotations

import os
import platform
from pathlib import Path


def machine_busy_seconds() -> float | None:
    """CPU seconds spent by every process on the machine (Linux, else None)."""
    try:
        fields = Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]
    except OSError:
        return None
    user, nice, system, _idle, _iowait, irq, softirq, steal = (int(x) for x in fields[:8])
    return (user + nice + system + irq + softirq + steal) / os.sysconf("SC_CLK_TCK")


def own_cpu_seconds() -> float:
    """CPU seconds of this process and the children it waited for."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def cpu_model() -> str:
    """The CPU's model name, quoted with every timing (the CPU differs between machines)."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"
