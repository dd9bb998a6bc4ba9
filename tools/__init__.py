"""Developer tools that are not part of the product: input generators (`python -m tools.generate`)."""
