"""Prices family: GPU list prices (clouds, neoclouds, catalogs, pages) and manual quotes."""
