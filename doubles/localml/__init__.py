"""localml: a local Azure ML control plane (a test double at the HTTP boundary) with Azurite for blobs.

    with LocalAzureML() as env:
        subprocess.run([...], env=env.subprocess_env())

See doubles/localml/README.md and docs/localml.md.
"""

from doubles.localml.env import LocalAzureML

__all__ = ["LocalAzureML"]
