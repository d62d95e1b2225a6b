"""Wire adapters: the only code that speaks a vendor's HTTP API (one module per API)."""
