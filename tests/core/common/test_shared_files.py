"""Files the runs write, on the shared object storage: classifier folders by content hash
(checked on fetch, never half-copied), plots and reports by name; on a folder and on S3."""

import json

import pytest

from resumebias_dagster.core.common.shared_files import MANIFEST, SharedFileError, SharedFiles, folder_digest
from resumebias_dagster.core.models.runtime import ModelRuntime, TrainedClassifier
from resumebias_dagster.resources.runtime import fetch_classifier


@pytest.fixture(params=["file", "s3"])
def shared(request, tmp_path, monkeypatch):
    if request.param == "file":
        return SharedFiles(f"file://{tmp_path}/store")
    server = request.getfixturevalue("s3_server")
    bucket = f"files-{tmp_path.name.lower().replace('_', '-')[-40:]}"
    server.create_bucket(bucket)
    for k, v in server.env().items():
        monkeypatch.setenv(k, v)
    return SharedFiles(f"s3://{bucket}/study")


@pytest.fixture
def classifier(tmp_path):
    folder = tmp_path / "trained" / "minilm-abc123"
    (folder / "tokenizer").mkdir(parents=True)
    (folder / "model.safetensors").write_bytes(b"\x00weights" * 1000)
    (folder / "config.json").write_text('{"labels": 3}')
    (folder / "tokenizer" / "vocab.txt").write_text("a\nb\n")
    return folder


def test_a_folder_comes_back_identical_under_its_content_hash(shared, classifier, tmp_path):
    digest = shared.put_folder(classifier, "classifiers")
    assert digest == folder_digest(classifier)
    assert shared.put_folder(classifier, "classifiers") == digest  # once per content
    fetched = shared.fetch_folder("classifiers", digest, tmp_path / "worker-b" / "minilm-abc123")
    assert folder_digest(fetched) == digest
    assert (fetched / "tokenizer" / "vocab.txt").read_text() == "a\nb\n"
    assert not list(fetched.parent.glob(".*partial"))


def test_an_unknown_or_unfinished_folder_is_refused_by_name(shared, classifier, tmp_path):
    with pytest.raises(SharedFileError, match=r"files/classifiers/0{64}: no finished folder of that content hash"):
        shared.fetch_folder("classifiers", "0" * 64, tmp_path / "x")
    # An upload cut off before its manifest: never fetched.
    digest = shared.put_folder(classifier, "classifiers")
    fs, root = shared._root()
    fs.delete_file(f"{root}/classifiers/{digest}/{MANIFEST}")
    with pytest.raises(SharedFileError, match="no finished folder"):
        shared.fetch_folder("classifiers", digest, tmp_path / "y")
    assert not (tmp_path / "y").exists()


def test_an_altered_file_is_refused_and_nothing_is_left_in_place(shared, classifier, tmp_path):
    digest = shared.put_folder(classifier, "classifiers")
    fs, root = shared._root()
    with fs.open_output_stream(f"{root}/classifiers/{digest}/config.json") as out:
        out.write(b'{"labels": 2}')
    with pytest.raises(SharedFileError, match=r"config.json: content does not match its hash in the manifest"):
        shared.fetch_folder("classifiers", digest, tmp_path / "z" / "minilm")
    assert not (tmp_path / "z" / "minilm").exists() and not list((tmp_path / "z").glob(".*"))


def test_a_manifest_that_does_not_hash_to_the_digest_is_refused(shared, classifier, tmp_path):
    digest = shared.put_folder(classifier, "classifiers")
    fs, root = shared._root()
    with fs.open_input_stream(f"{root}/classifiers/{digest}/{MANIFEST}") as f:
        manifest = f.read()
    assert json.loads(manifest)
    # The same manifest under another digest: the folder it names is not that content.
    with shared._output(fs, f"{root}/classifiers/{'1' * 64}/{MANIFEST}") as out:
        out.write(manifest)
    with pytest.raises(SharedFileError, match="does not hash to 1{64}"):
        shared.fetch_folder("classifiers", "1" * 64, tmp_path / "w")


def test_single_files_by_name(shared, tmp_path):
    png = tmp_path / "fit_volcano.png"
    png.write_bytes(b"\x89PNG...")
    assert shared.put_file(png).endswith("/files/reports/fit_volcano.png")
    assert shared.get_file("fit_volcano.png") == b"\x89PNG..."
    assert shared.get_file("missing.png") is None


def test_a_worker_without_the_folder_fetches_the_classifier_by_hash(classifier, tmp_path, monkeypatch):
    shared = SharedFiles(f"file://{tmp_path}/store")
    digest = shared.put_folder(classifier, "classifiers")
    monkeypatch.setenv("RESUMEBIAS_DATA_DIR", str(tmp_path / "worker-b"))
    gone = TrainedClassifier(str(tmp_path / "worker-a" / "minilm-abc123"), "abc123", digest)
    runtime = ModelRuntime(
        resolve_compute=lambda: None,
        cache_dir=tmp_path,
        classifiers={"minilm": gone},
        fetch_classifier=lambda t: fetch_classifier(shared, t),
    )
    local = runtime.classifier("minilm")
    assert local.path == str(tmp_path / "worker-b" / "models" / "classifiers" / "fetched" / digest)
    assert folder_digest(local.path) == digest and local.fingerprint == "abc123"


@pytest.mark.parametrize("path", ["/x/..", "..", "/x/minilm/../.."])
def test_a_fetched_folder_stays_in_its_content_hash_folder(classifier, tmp_path, monkeypatch, path):
    # A classifier path ending in /.. made the fetch replace data/models (issue 25, item 10).
    shared = SharedFiles(f"file://{tmp_path}/store")
    digest = shared.put_folder(classifier, "classifiers")
    data = tmp_path / "worker-b"
    monkeypatch.setenv("RESUMEBIAS_DATA_DIR", str(data))
    keep = data / "models" / "keep.txt"
    keep.parent.mkdir(parents=True)
    keep.write_text("other models")
    local = fetch_classifier(shared, TrainedClassifier(path, "abc123", digest))
    assert keep.read_text() == "other models"
    assert local.path == str(data / "models" / "classifiers" / "fetched" / digest)


@pytest.mark.parametrize("digest", ["../../models", "a" * 63, "A" * 64, ""])
def test_a_content_hash_that_is_not_one_is_refused(tmp_path, digest):
    shared = SharedFiles(f"file://{tmp_path}/store")
    with pytest.raises(SharedFileError, match="not a SHA-256 content hash"):
        shared.fetch_folder("classifiers", digest, tmp_path / "dest")


def test_a_missing_folder_without_shared_files_says_what_to_do(tmp_path):
    runtime = ModelRuntime(
        resolve_compute=lambda: None,
        cache_dir=tmp_path,
        classifiers={"minilm": TrainedClassifier("/elsewhere/minilm-1", "1", "f" * 64)},
    )
    with pytest.raises(
        ValueError,
        match=r"minilm: its classifier folder /elsewhere/minilm-1 is not on this machine, "
        r"and no shared files are configured .*RESUMEBIAS_TABLES_URL",
    ):
        runtime.classifier("minilm")
