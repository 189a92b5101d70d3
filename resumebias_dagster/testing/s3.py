"""A local S3-compatible server for tests: moto in server mode on 127.0.0.1, in a thread of the
test process (real HTTP; every worker process of a test reaches it like a bucket in the cloud)."""

from __future__ import annotations

import os

from resumebias_dagster.testing.processes import free_port

ACCESS_KEY = "test-access-key"
SECRET_KEY = "test-secret-key"
REGION = "us-east-1"


def unavailable_reason() -> str | None:
    try:
        import boto3  # noqa: F401
        import moto.server  # noqa: F401
        import pyarrow.fs  # noqa: F401
    except ImportError as e:
        return f"the S3 test server needs moto[server] and pyarrow ({e.name} missing): pip install -e '.[test]'"
    return None


class S3Server:
    """``with S3Server() as s3: s3.create_bucket("b"); env = s3.env()``."""

    def __init__(self):
        self.port = free_port()
        self.endpoint = f"http://127.0.0.1:{self.port}"
        self._server = None

    def __enter__(self) -> "S3Server":
        import logging

        from moto.server import ThreadedMotoServer

        # werkzeug logs every request at INFO; a test's log stays readable without them.
        logging.getLogger("werkzeug").setLevel(logging.WARNING)
        self._server = ThreadedMotoServer(ip_address="127.0.0.1", port=self.port, verbose=False)
        self._server.start()
        return self

    def __exit__(self, *exc) -> None:
        if self._server is not None:
            self._server.stop()

    def env(self) -> dict[str, str]:
        """What a process needs to reach this server as the shared tables' S3."""
        return {
            "AWS_ENDPOINT_URL": self.endpoint,
            "AWS_ACCESS_KEY_ID": ACCESS_KEY,
            "AWS_SECRET_ACCESS_KEY": SECRET_KEY,
            "AWS_REGION": REGION,
            # No EC2 metadata lookups for a region or credentials: there is no EC2 here.
            "AWS_EC2_METADATA_DISABLED": "true",
        }

    def client(self):
        import boto3

        return boto3.client(
            "s3",
            endpoint_url=self.endpoint,
            aws_access_key_id=ACCESS_KEY,
            aws_secret_access_key=SECRET_KEY,
            region_name=REGION,
        )

    def create_bucket(self, name: str) -> None:
        """Create the bucket unless this server already has it."""
        client = self.client()
        if name not in {b["Name"] for b in client.list_buckets().get("Buckets", [])}:
            client.create_bucket(Bucket=name)

    def keys(self, bucket: str, prefix: str = "") -> list[str]:
        pages = self.client().get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix)
        return sorted(o["Key"] for page in pages for o in page.get("Contents", []))

    def apply_env(self, environ=os.environ) -> None:
        environ.update(self.env())
