"""Unified model types, the error taxonomy, one wire adapter per vendor API, and the model catalog.

Imports nothing of ours. Vendor SDKs are imported only inside `providers.wire`, lazily.
"""
