"""Refuse to keep database files on a network filesystem.

SQLite (the response store, in WAL mode) and DuckDB (the tables) rely on POSIX locks and, for
WAL, on shared memory between the processes that open the file; NFS, SMB and the FUSE
bridges to object storage implement neither reliably, and a database on them can be
corrupted silently when two machines (or two processes) write. So both files must sit on a
local disk; several machines share results through the scale-out storage, not through a
mounted folder.

The filesystem of a path is read from the kernel's mount table (``/proc/self/mounts`` on
Linux): the longest mount point that contains the path decides. Elsewhere (macOS, Windows)
there is no such table and nothing is refused.

Folders shared from a host into a virtual machine or a container are refused too: the host
side can open the same file while its locks are not passed through (or only emulated in the
guest), and SQLite's WAL needs shared memory the bridge does not share:
- ``vboxsf`` (VirtualBox shared folders), ``vmhgfs``/``fuse.vmhgfs-fuse`` (VMware),
  ``prl_fs`` (Parallels): locking not passed to the host; WAL databases are known to break.
- ``virtiofs`` (QEMU/libvirt, Docker Desktop and Podman machines): POSIX locks stay in the
  guest unless the host daemon runs with ``--posix-lock``, which nothing here can check.
- ``fuse.grpcfuse``, ``osxfs``, ``fakeowner`` (Docker Desktop's older file sharing).
- ``drvfs`` and ``9p`` (WSL's Windows drives): no byte-range locks.
A container keeps its data on a named volume (a local filesystem) instead of a bind mount
of the host's folder.
"""

from __future__ import annotations

import os
from pathlib import Path

MOUNTS_FILE = "/proc/self/mounts"
# Filesystem types whose locking a database cannot trust: network filesystems and FUSE
# bridges to remote or object storage. (9p serves e.g. WSL2's Windows drives.)
NETWORK_FILESYSTEMS = frozenset(
    {
        "nfs",
        "nfs4",
        "cifs",
        "smb",
        "smb3",
        "smbfs",
        "ncpfs",
        "afs",
        "coda",
        "9p",
        "ceph",
        "glusterfs",
        "lustre",
        "gpfs",
        "beegfs",
        "orangefs",
        "pvfs2",
        "davfs",
        "fuse.sshfs",
        "fuse.s3fs",
        "fuse.gcsfuse",
        "fuse.rclone",
        "fuse.goofys",
        "fuse.mountpoint-s3",
        "fuse.juicefs",
        "fuse.glusterfs",
        "fuse.cephfs",
        "fuse.davfs2",
        "fuse.blobfuse",
        "fuse.blobfuse2",
        "fuse.geesefs",
        "fuse.alluxio-fuse",
        # Host folders shared into a VM or container (see the module doc).
        "vboxsf",
        "vmhgfs",
        "fuse.vmhgfs-fuse",
        "prl_fs",
        "virtiofs",
        "fuse.grpcfuse",
        "osxfs",
        "fakeowner",
        "drvfs",
    }
)


class NetworkFilesystemError(RuntimeError):
    """A database file would live on a network filesystem; the message says what to do."""


def _unescape(field: str) -> str:
    # The mount table writes space, tab, newline and backslash in paths as octal escapes.
    return field.replace("\\040", " ").replace("\\011", "\t").replace("\\012", "\n").replace("\\134", "\\")


def filesystem_of(path: str | os.PathLike, mounts_file: str | os.PathLike | None = None) -> str | None:
    """The filesystem type of the mount holding ``path`` (which need not exist yet), or None
    where the mount table cannot be read."""
    table = Path(mounts_file or MOUNTS_FILE)
    try:
        lines = table.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return None
    target = Path(path).expanduser().absolute()
    # Resolve what exists of the path (symlinks into a mount count as that mount).
    existing = target
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    target = existing.resolve() / target.relative_to(existing)
    best, best_type = "", None
    for line in lines:
        fields = line.split()
        if len(fields) < 3:
            continue
        mount_point, fs_type = _unescape(fields[1]), fields[2]
        mount = Path(mount_point)
        if (target == mount or mount in target.parents) and len(mount_point) >= len(best):
            best, best_type = mount_point, fs_type
    return best_type


def require_local_disk(
    path: str | os.PathLike, what: str, advice: str, mounts_file: str | os.PathLike | None = None
) -> None:
    """Raise ``NetworkFilesystemError`` if ``path`` is on a network filesystem.

    ``what`` names the file ("the response store"), ``advice`` says what to do instead.
    """
    fs_type = filesystem_of(path, mounts_file)
    if fs_type is not None and (fs_type in NETWORK_FILESYSTEMS or fs_type.split(".")[0] in NETWORK_FILESYSTEMS):
        raise NetworkFilesystemError(
            f"{what} {path} is on a network filesystem ({fs_type}); its database locking is not reliable there and "
            f"the file could be corrupted. {advice}"
        )
