"""The offline policy gate (`python -m preflight STACK`): the real Pulumi CLI's `pulumi preview --policy-pack`
of a stack, as the first deploy of a new stack and as an update of the deployed one, on a local file backend
with the gate's offline azure-native provider (preflight.provider), then the gate's own checks of the engine's
steps (preflight.gate)."""
