"""The workload registry: teams, workloads and allocation mappings, written as YAML by users."""
