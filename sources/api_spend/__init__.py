"""api_spend family: LLM API spend (LiteLLM proxy logs and price catalog, OpenAI and Anthropic reports)."""
