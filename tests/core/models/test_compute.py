import pytest

from resumebias_dagster.core.models.compute import cpu_supports_bf16, resolve_compute


def test_auto_picks_cuda_with_bf16_when_available():
    s = resolve_compute("auto", "auto", cuda_available=True, cuda_bf16=True)
    assert (s.device, s.dtype, s.batch_size) == ("cuda", "bfloat16", 64)


def test_auto_on_old_gpu_uses_fp16():
    s = resolve_compute("auto", "auto", cuda_available=True, cuda_bf16=False)
    assert s.dtype == "float16"


def test_auto_cpu_uses_bf16_only_with_hardware_support():
    s = resolve_compute("auto", "auto", cuda_available=False, cuda_bf16=False, cpu_bf16=True)
    assert (s.device, s.dtype, s.batch_size) == ("cpu", "bfloat16", 2)
    s = resolve_compute("auto", "auto", cuda_available=False, cuda_bf16=False, cpu_bf16=False)
    assert s.dtype == "float32"
    assert s.num_threads >= 1


def test_explicit_settings_are_kept():
    s = resolve_compute("cpu", "float32", num_threads=1, batch_size=3, cuda_available=True, cuda_bf16=True)
    assert (s.device, s.dtype, s.num_threads, s.batch_size) == ("cpu", "float32", 1, 3)


def test_cuda_requested_without_cuda_is_a_clear_error():
    with pytest.raises(ValueError, match="compute.device: 'cuda' requested but CUDA is not available"):
        resolve_compute("cuda", cuda_available=False, cuda_bf16=False)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"device": "tpu"}, "compute.device: 'tpu' is not one of"),
        ({"dtype": "int8"}, "compute.dtype: 'int8' is not one of"),
        ({"batch_size": -1}, "must be >= 0"),
    ],
)
def test_bad_settings_name_the_setting(kwargs, message):
    with pytest.raises(ValueError, match=message):
        resolve_compute(**kwargs, cuda_available=False, cuda_bf16=False)


def test_cpu_bf16_flag_parsing():
    assert cpu_supports_bf16("processor: 0\nflags\t\t: fpu avx512f avx512_bf16 sse\n")
    assert cpu_supports_bf16("flags : amx_bf16 amx_tile\n")
    assert not cpu_supports_bf16("flags : fpu avx2 avx512f\n")
    assert not cpu_supports_bf16("")


def test_real_machine_resolution_is_consistent():
    import torch

    s = resolve_compute()
    assert s.device == ("cuda" if torch.cuda.is_available() else "cpu")
    assert s.torch_dtype in (torch.float32, torch.bfloat16, torch.float16)
