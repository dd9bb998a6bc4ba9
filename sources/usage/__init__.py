"""GPU usage sources: DCGM exporter, nvidia-smi, Slurm accounting, Kubernetes pods, OpenCost allocations."""
