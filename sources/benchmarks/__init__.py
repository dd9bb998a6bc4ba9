"""Benchmark-run connectors: vLLM, LLMPerf, guidellm, MLPerf, GenAI-Perf and our own record formats."""
