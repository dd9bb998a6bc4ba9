"""GPU usage sources: DCGM exporter, nvidia-smi, Slurm accounting, OpenCost allocations."""
