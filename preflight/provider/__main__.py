"""`python -m preflight.provider <engine address> [flags]`: the stand-in plugin's entry point (the engine
passes
its own address and logging flags; the provider needs neither)."""

from preflight.provider.server import serve

serve()
