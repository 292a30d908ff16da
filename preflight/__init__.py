"""The offline gate: the stack program under Pulumi mocks (`preflight.program.run_program`) and the
policy pack over its gRPC analyzer protocol (the CLI, `python -m preflight STACK`)."""
