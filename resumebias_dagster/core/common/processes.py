"""Processes of this machine."""

import os


def pid_alive(pid: int) -> bool:
    """Whether a process with this id exists on this machine (one we may not signal counts)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
