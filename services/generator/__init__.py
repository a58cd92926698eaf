"""A transaction producer for local runs: steady rate, random payers/beneficiaries, decimal amounts."""
