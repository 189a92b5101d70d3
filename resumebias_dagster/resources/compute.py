import dagster as dg
from pydantic import Field

from resumebias_dagster.core.models.compute import ComputeSettings, resolve_compute


class ComputeResource(dg.ConfigurableResource):
    """The torch device every model asset runs on (the GPU when there is one)."""

    device: str = Field(default="auto", description="auto (cuda if available, else cpu) | cpu | cuda | cuda:N | mps")
    dtype: str = Field(
        default="auto",
        description="auto (CUDA: bf16 where the card has it, else fp16; CPU: the embedded LLM measures fp32 and bf16 at first load, the encoders time one matrix product in each, core/models/calibration.py) | float32 | bfloat16 | float16",
    )
    num_threads: int = Field(default=0, description="torch CPU threads; 0 = every core this process may use")
    batch_size: int = Field(default=0, description="inference batch size; 0 = 2 on CPU, 64 on CUDA")

    def settings(self) -> ComputeSettings:
        settings = resolve_compute(self.device, self.dtype, self.num_threads, self.batch_size)
        settings.apply()
        return settings
