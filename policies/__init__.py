"""azml-gpu CrossGuard policy pack: one module per concern, registered in policies/registry.py."""
