"""Exchange-rate files (`inputs/fx/`): the ECB reference-rate history and plain date,base,quote,rate CSVs."""
