"""Helpers for the stackconfig tests are in stackconfig_factory.py (this folder is the package
tests.stackconfig,
so its test files may share names with other folders' own)."""
